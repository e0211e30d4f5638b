// Command redeliver-support is RedeliverSupportFunction:
// POST /api/v1/workspaces/{workspace_id}/support-webhooks/{id}/deliveries/{delivery_id}/redeliver.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/deliveriesapi"
)

func main() { app.RunHTTP("RedeliverSupportFunction", deliveriesapi.Redeliver(deliveriesapi.Support)) }
