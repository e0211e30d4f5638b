// Command list-audit-events is ListAuditEventsFunction:
// GET /api/v1/workspaces/{workspace_id}/audit-events.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP("ListAuditEventsFunction") }
