// Command recover-support-deliveries is RecoverSupportDeliveriesFunction:
// POST /api/v1/workspaces/{workspace_id}/support-webhooks/{id}/recover.
package main

import "github.com/chatbridge/chat/pkg/app/delivering"

func main() { delivering.RunHTTP(function) }

const function = "RecoverSupportDeliveriesFunction"
