// Command edit-webhook-message is EditWebhookMessageFunction:
// PATCH /webhooks/{webhook}/messages/{message_id} (an inbound webhook edits a message it posted).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/editsapi/webhookedits"
)

func main() { httpfn.Run("EditWebhookMessageFunction", webhookedits.EditWebhookMessage) }
