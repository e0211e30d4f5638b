// Command inbound-webhook is InboundWebhookFunction:
// POST /webhooks/{webhook}/messages.
package main

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
)

const function = "InboundWebhookFunction"

func main() {
	app.InitLambdaLogger()
	a, _, err := app.FromEnv(context.Background())
	if err != nil {
		app.Exit(function, err)
	}
	ttl, err := app.WebhookCacheTTL()
	if err != nil {
		app.Exit(function, err)
	}
	app.StartHTTP(map[string]http.Handler{function: a.InboundHandler(ttl)})
}
