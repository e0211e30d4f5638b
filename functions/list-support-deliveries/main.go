// Command list-support-deliveries is ListSupportDeliveriesFunction:
// GET /api/v1/workspaces/{workspace_id}/support-webhooks/{id}/deliveries.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/deliveriesapi"
)

func main() { app.RunHTTP("ListSupportDeliveriesFunction", deliveriesapi.Log(deliveriesapi.Support)) }
