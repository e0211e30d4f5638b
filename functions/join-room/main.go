// Command join-room is JoinRoomFunction:
// POST /api/v1/external/rooms/{room_id}/guests.
package main

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
)

const function = "JoinRoomFunction"

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
	a.Metrics = app.LambdaMetrics(function)
	return app.HTTPLambda(map[string]http.Handler{function: a.JoinHandler()}), nil
}
