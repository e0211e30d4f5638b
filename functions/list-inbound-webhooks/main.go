// Command list-inbound-webhooks is ListInboundWebhooksFunction:
// GET /api/v1/workspaces/{workspace_id}/inbound-webhooks.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP("ListInboundWebhooksFunction") }
