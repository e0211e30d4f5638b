// Command recover-support-deliveries is RecoverSupportDeliveriesFunction:
// POST /api/v1/workspaces/{workspace_id}/support-webhooks/{id}/recover.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/deliveriesapi"
)

func main() {
	httpfn.Run("RecoverSupportDeliveriesFunction", deliveriesapi.Recover(deliveriesapi.Support))
}
