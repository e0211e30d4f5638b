// Command list-outbound-deliveries is ListOutboundDeliveriesFunction:
// GET /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/deliveries.
package main

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
)

const function = "ListOutboundDeliveriesFunction"

func main() {
	app.InitLambdaLogger()
	h, err := handler(context.Background())
	app.Start(function, h, err)
}

// handler builds the function's Lambda handler from the environment.
func handler(ctx context.Context) (app.HTTPHandler, error) {
	a, _, err := app.FromEnv(ctx, awsenv.EnvCursorKey)
	if err != nil {
		return nil, err
	}
	return app.HTTPLambda(map[string]http.Handler{function: a.ListOutboundDeliveriesHandler()}), nil
}
