// Command update-outbound-webhook is UpdateOutboundWebhookFunction:
// PATCH /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("UpdateOutboundWebhookFunction", webhooksapi.Update(webhooks.Outbound)) }
