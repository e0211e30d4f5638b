// Command test-outbound-webhook is TestOutboundWebhookFunction:
// POST /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/test.
package main

import "github.com/chatbridge/chat/pkg/app/delivering"

func main() { delivering.RunHTTP(function) }

const function = "TestOutboundWebhookFunction"
