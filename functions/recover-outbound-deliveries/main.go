// Command recover-outbound-deliveries is RecoverOutboundDeliveriesFunction:
// POST /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/recover.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/deliveriesapi"
)

func main() {
	httpfn.Run("RecoverOutboundDeliveriesFunction", deliveriesapi.Recover(deliveriesapi.Outbound))
}
