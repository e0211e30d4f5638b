// Command update-support-webhook is UpdateSupportWebhookFunction:
// PATCH /api/v1/workspaces/{workspace_id}/support-webhooks/{id}.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { app.RunHTTP("UpdateSupportWebhookFunction", webhooksapi.Update(webhooks.Support)) }
