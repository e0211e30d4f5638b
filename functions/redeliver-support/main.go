// Command redeliver-support is RedeliverSupportFunction:
// POST /api/v1/workspaces/{workspace_id}/support-webhooks/{id}/deliveries/{delivery_id}/redeliver.
package main

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
)

const function = "RedeliverSupportFunction"

func main() {
	app.InitLambdaLogger()
	h, err := handler(context.Background())
	app.Start(function, h, err)
}

// handler builds the function's Lambda handler from the environment.
func handler(ctx context.Context) (app.HTTPHandler, error) {
	a, _, err := app.FromEnv(ctx, awsenv.EnvDeliveryQueueURL)
	if err != nil {
		return nil, err
	}
	return app.HTTPLambda(map[string]http.Handler{function: a.RedeliverSupportHandler()}), nil
}
