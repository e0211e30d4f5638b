// Command inbound-webhook is InboundWebhookFunction:
// POST /webhooks/{webhook}/messages.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/inboundapi"
)

func main() { httpfn.Run("InboundWebhookFunction", inboundapi.Inbound) }
