// Command list-inbound-requests is ListInboundRequestsFunction:
// GET /api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}/requests.
package main

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
)

const function = "ListInboundRequestsFunction"

func main() {
	app.InitLambdaLogger()
	a, _, err := app.FromEnv(context.Background(), awsenv.EnvCursorKey)
	if err != nil {
		app.Exit(function, err)
	}
	app.StartHTTP(map[string]http.Handler{function: a.RequestLogHandler()})
}
