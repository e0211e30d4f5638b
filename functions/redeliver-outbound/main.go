// Command redeliver-outbound is RedeliverOutboundFunction:
// POST /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/deliveries/{delivery_id}/redeliver.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/deliveriesapi"
)

func main() {
	app.RunHTTP("RedeliverOutboundFunction", deliveriesapi.Redeliver(deliveriesapi.Outbound))
}
