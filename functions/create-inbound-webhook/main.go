// Command create-inbound-webhook is CreateInboundWebhookFunction:
// POST /api/v1/workspaces/{workspace_id}/inbound-webhooks.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("CreateInboundWebhookFunction", webhooksapi.Create(webhooks.Inbound)) }
