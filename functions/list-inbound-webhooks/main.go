// Command list-inbound-webhooks is ListInboundWebhooksFunction:
// GET /api/v1/workspaces/{workspace_id}/inbound-webhooks.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { app.RunHTTP("ListInboundWebhooksFunction", webhooksapi.InboundWebhooks) }
