// Command inbound-webhook is InboundWebhookFunction:
// POST /webhooks/{webhook}/messages.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/inboundapi"
)

func main() { app.RunHTTP("InboundWebhookFunction", inboundapi.Inbound) }
