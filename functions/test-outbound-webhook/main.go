// Command test-outbound-webhook is TestOutboundWebhookFunction:
// POST /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/test.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/integratorsapi"
)

func main() { httpfn.Run("TestOutboundWebhookFunction", integratorsapi.Test(integratorsapi.Outbound)) }
