// Command recover-outbound-deliveries is RecoverOutboundDeliveriesFunction:
// POST /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/recover.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/integratorsapi"
	"github.com/chatbridge/chat/pkg/webhooks"
)

func main() {
	httpfn.Run("RecoverOutboundDeliveriesFunction", integratorsapi.Recover(webhooks.Outbound))
}
