// Command list-outbound-deliveries is ListOutboundDeliveriesFunction:
// GET /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/deliveries.
package main

import "github.com/chatbridge/chat/pkg/app/delivering"

func main() { delivering.RunHTTP(function) }

const function = "ListOutboundDeliveriesFunction"
