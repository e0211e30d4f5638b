// Command rotate-outbound-webhook-secret is RotateOutboundWebhookSecretFunction:
// POST /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/rotate-secret.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() {
	httpfn.Run("RotateOutboundWebhookSecretFunction", webhooksapi.Rotate(webhooks.Outbound))
}
