// Command update-inbound-webhook is UpdateInboundWebhookFunction:
// PATCH /api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { app.RunHTTP("UpdateInboundWebhookFunction", webhooksapi.Update(webhooks.Inbound)) }
