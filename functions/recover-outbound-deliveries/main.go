// Command recover-outbound-deliveries is RecoverOutboundDeliveriesFunction:
// POST /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/recover.
package main

import "github.com/chatbridge/chat/pkg/app/delivering"

func main() { delivering.RunHTTP(function) }

const function = "RecoverOutboundDeliveriesFunction"
