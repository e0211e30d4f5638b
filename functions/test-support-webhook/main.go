// Command test-support-webhook is TestSupportWebhookFunction:
// POST /api/v1/workspaces/{workspace_id}/support-webhooks/{id}/test.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/integratorsapi"
)

func main() { httpfn.Run("TestSupportWebhookFunction", integratorsapi.Test(integratorsapi.Support)) }
