// Command update-outbound-webhook is UpdateOutboundWebhookFunction:
// PATCH /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { app.RunHTTP("UpdateOutboundWebhookFunction", webhooksapi.Update(webhooks.Outbound)) }
