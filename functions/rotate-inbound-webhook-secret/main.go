// Command rotate-inbound-webhook-secret is RotateInboundWebhookSecretFunction:
// POST /api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}/rotate-secret.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("RotateInboundWebhookSecretFunction", webhooksapi.Rotate(webhooks.Inbound)) }
