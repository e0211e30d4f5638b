// Command list-audit-events is ListAuditEventsFunction:
// GET /api/v1/workspaces/{workspace_id}/audit-events.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("ListAuditEventsFunction", webhooksapi.AuditEvents) }
