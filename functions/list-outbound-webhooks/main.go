// Command list-outbound-webhooks is ListOutboundWebhooksFunction:
// GET /api/v1/workspaces/{workspace_id}/outbound-webhooks.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("ListOutboundWebhooksFunction", webhooksapi.OutboundWebhooks) }
