// Command rotate-support-webhook-secret is RotateSupportWebhookSecretFunction:
// POST /api/v1/workspaces/{workspace_id}/support-webhooks/{id}/rotate-secret.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP("RotateSupportWebhookSecretFunction") }
