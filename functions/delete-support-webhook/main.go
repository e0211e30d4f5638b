// Command delete-support-webhook is DeleteSupportWebhookFunction:
// DELETE /api/v1/workspaces/{workspace_id}/support-webhooks/{id}.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

func main() { httpfn.Run("DeleteSupportWebhookFunction", webhooksapi.Delete(webhooks.Support)) }
