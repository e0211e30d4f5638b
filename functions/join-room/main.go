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
	a, _, err := app.FromEnv(context.Background())
	if err != nil {
		app.Exit(function, err)
	}
	app.StartHTTP(map[string]http.Handler{function: a.JoinHandler()})
}
