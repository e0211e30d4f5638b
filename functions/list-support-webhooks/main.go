// Command list-support-webhooks is ListSupportWebhooksFunction:
// GET /api/v1/workspaces/{workspace_id}/support-webhooks.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("ListSupportWebhooksFunction", webhooksapi.SupportWebhooks) }
