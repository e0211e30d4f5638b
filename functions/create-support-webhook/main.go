// Command create-support-webhook is CreateSupportWebhookFunction:
// POST /api/v1/workspaces/{workspace_id}/support-webhooks.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP("CreateSupportWebhookFunction") }
