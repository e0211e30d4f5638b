// Command list-outbound-deliveries is ListOutboundDeliveriesFunction:
// GET /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/deliveries.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/deliveriesapi"
)

func main() { httpfn.Run("ListOutboundDeliveriesFunction", deliveriesapi.Log(deliveriesapi.Outbound)) }
