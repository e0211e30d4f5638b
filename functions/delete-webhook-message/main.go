// Command delete-webhook-message is DeleteWebhookMessageFunction:
// DELETE /webhooks/{webhook}/messages/{message_id} (an inbound webhook deletes a message it posted).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/editsapi/webhookedits"
)

func main() { httpfn.Run("DeleteWebhookMessageFunction", webhookedits.DeleteWebhookMessage) }
