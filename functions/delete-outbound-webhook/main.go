// Command delete-outbound-webhook is DeleteOutboundWebhookFunction:
// DELETE /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("DeleteOutboundWebhookFunction", webhooksapi.Delete(webhooks.Outbound)) }
