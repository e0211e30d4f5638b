// Command list-inbound-webhooks is ListInboundWebhooksFunction:
// GET /api/v1/workspaces/{workspace_id}/inbound-webhooks.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("ListInboundWebhooksFunction", webhooksapi.InboundWebhooks) }
