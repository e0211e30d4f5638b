// Command rotate-support-webhook-secret is RotateSupportWebhookSecretFunction:
// POST /api/v1/workspaces/{workspace_id}/support-webhooks/{id}/rotate-secret.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("RotateSupportWebhookSecretFunction", webhooksapi.Rotate(webhooks.Support)) }
