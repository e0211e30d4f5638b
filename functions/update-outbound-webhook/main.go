// Command update-outbound-webhook is UpdateOutboundWebhookFunction:
// PATCH /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP("UpdateOutboundWebhookFunction") }
