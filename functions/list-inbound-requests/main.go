// Command list-inbound-requests is ListInboundRequestsFunction:
// GET /api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}/requests.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/inboundapi/requestlog"
)

func main() { httpfn.Run("ListInboundRequestsFunction", requestlog.RequestLog) }
