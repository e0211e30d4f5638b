// Command redeliver-outbound is RedeliverOutboundFunction:
// POST /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/deliveries/{delivery_id}/redeliver.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/deliveriesapi"
)

func main() {
	httpfn.Run("RedeliverOutboundFunction", deliveriesapi.Redeliver(deliveriesapi.Outbound))
}
