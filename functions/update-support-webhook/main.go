// Command update-support-webhook is UpdateSupportWebhookFunction:
// PATCH /api/v1/workspaces/{workspace_id}/support-webhooks/{id}.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("UpdateSupportWebhookFunction", webhooksapi.Update(webhooks.Support)) }
