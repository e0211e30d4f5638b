// Command list-support-deliveries is ListSupportDeliveriesFunction:
// GET /api/v1/workspaces/{workspace_id}/support-webhooks/{id}/deliveries.
package main

import "github.com/chatbridge/chat/pkg/app/delivering"

func main() { delivering.RunHTTP(function) }

const function = "ListSupportDeliveriesFunction"
