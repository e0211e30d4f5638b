// Command create-outbound-webhook is CreateOutboundWebhookFunction:
// POST /api/v1/workspaces/{workspace_id}/outbound-webhooks.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP("CreateOutboundWebhookFunction") }
