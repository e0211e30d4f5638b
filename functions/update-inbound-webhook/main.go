// Command update-inbound-webhook is UpdateInboundWebhookFunction:
// PATCH /api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP("UpdateInboundWebhookFunction") }
