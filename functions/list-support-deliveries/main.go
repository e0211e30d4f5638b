// Command list-support-deliveries is ListSupportDeliveriesFunction:
// GET /api/v1/workspaces/{workspace_id}/support-webhooks/{id}/deliveries.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/deliveriesapi"
)

func main() { httpfn.Run("ListSupportDeliveriesFunction", deliveriesapi.Log(deliveriesapi.Support)) }
