// Command create-room is CreateRoomFunction:
// POST /api/v1/workspaces/{workspace_id}/rooms (opens a Temporary Room).
package main

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
)

const function = "CreateRoomFunction"

func main() {
	app.InitLambdaLogger()
	h, err := handler(context.Background())
	app.Start(function, h, err)
}

// handler builds the function's Lambda handler from the environment.
func handler(ctx context.Context) (app.HTTPHandler, error) {
	a, _, err := app.FromEnv(ctx)
	if err != nil {
		return nil, err
	}
	return app.HTTPLambda(map[string]http.Handler{function: a.CreateRoomHandler()}), nil
}
