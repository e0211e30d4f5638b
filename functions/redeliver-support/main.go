// Command redeliver-support is RedeliverSupportFunction:
// POST /api/v1/workspaces/{workspace_id}/support-webhooks/{id}/deliveries/{delivery_id}/redeliver.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/deliveriesapi"
)

func main() { httpfn.Run("RedeliverSupportFunction", deliveriesapi.Redeliver(deliveriesapi.Support)) }
