// Command inbound-webhook is InboundWebhookFunction:
// POST /webhooks/{webhook}/messages.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP(function) }

const function = "InboundWebhookFunction"
