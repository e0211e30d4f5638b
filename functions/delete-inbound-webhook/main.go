// Command delete-inbound-webhook is DeleteInboundWebhookFunction:
// DELETE /api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("DeleteInboundWebhookFunction", webhooksapi.Delete(webhooks.Inbound)) }
