// Command create-support-webhook is CreateSupportWebhookFunction:
// POST /api/v1/workspaces/{workspace_id}/support-webhooks.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("CreateSupportWebhookFunction", webhooksapi.Create(webhooks.Support)) }
