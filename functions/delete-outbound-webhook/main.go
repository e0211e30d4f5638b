// Command delete-outbound-webhook is DeleteOutboundWebhookFunction:
// DELETE /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP("DeleteOutboundWebhookFunction") }
