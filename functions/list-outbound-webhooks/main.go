// Command list-outbound-webhooks is ListOutboundWebhooksFunction:
// GET /api/v1/workspaces/{workspace_id}/outbound-webhooks.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP(function) }

const function = "ListOutboundWebhooksFunction"
