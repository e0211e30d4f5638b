// Command delete-inbound-webhook is DeleteInboundWebhookFunction:
// DELETE /api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP("DeleteInboundWebhookFunction") }
