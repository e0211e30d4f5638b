// Command list-outbound-deliveries is ListOutboundDeliveriesFunction:
// GET /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/deliveries.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/deliveriesapi"
)

func main() { app.RunHTTP("ListOutboundDeliveriesFunction", deliveriesapi.Log(deliveriesapi.Outbound)) }
