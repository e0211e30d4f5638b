// Command create-outbound-webhook is CreateOutboundWebhookFunction:
// POST /api/v1/workspaces/{workspace_id}/outbound-webhooks.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("CreateOutboundWebhookFunction", webhooksapi.Create(webhooks.Outbound)) }
