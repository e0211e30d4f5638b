// Command test-support-webhook is TestSupportWebhookFunction:
// POST /api/v1/workspaces/{workspace_id}/support-webhooks/{id}/test.
package main

import "github.com/chatbridge/chat/pkg/app/delivering"

func main() { delivering.RunHTTP(function) }

const function = "TestSupportWebhookFunction"
