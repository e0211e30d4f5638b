// Command update-support-webhook is UpdateSupportWebhookFunction:
// PATCH /api/v1/workspaces/{workspace_id}/support-webhooks/{id}.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP("UpdateSupportWebhookFunction") }
