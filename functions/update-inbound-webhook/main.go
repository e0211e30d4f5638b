// Command update-inbound-webhook is UpdateInboundWebhookFunction:
// PATCH /api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("UpdateInboundWebhookFunction", webhooksapi.Update(webhooks.Inbound)) }
