// Command list-outbound-webhooks is ListOutboundWebhooksFunction:
// GET /api/v1/workspaces/{workspace_id}/outbound-webhooks.
package main

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
)

const function = "ListOutboundWebhooksFunction"

func main() {
	app.InitLambdaLogger()
	a, _, err := app.FromEnv(context.Background(), awsenv.EnvCursorKey)
	if err != nil {
		app.Exit(function, err)
	}
	app.StartHTTP(map[string]http.Handler{function: a.OutboundWebhooksHandler()})
}
