// Command realtime-push is RealtimePushFunction: it reads the table's stream
// and pushes each stored message, each landed translation and each room
// closing to the subscribed WebSocket connections, in their readers'
// languages.
package main

import (
	"context"

	"github.com/chatbridge/chat/pkg/app"
)

func main() {
	app.InitLambdaLogger()
	a, sender, err := app.RealtimeFromEnv(context.Background())
	if err != nil {
		app.Exit(app.RealtimePushFunction, err)
	}
	app.Start(app.RealtimePushFunction, a.RealtimePush(sender).HandleStream, nil)
}
