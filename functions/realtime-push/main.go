// Command realtime-push is RealtimePushFunction: it reads the table's stream
// and pushes each stored message, each landed translation and each room
// closing to the subscribed WebSocket connections, in their readers'
// languages, handing large audiences to the fan-out workers.
package main

import (
	"context"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/realtiming"
)

func main() {
	app.InitLambdaLogger()
	a, sender, err := realtiming.FromEnv(context.Background())
	if err != nil {
		app.Exit(realtiming.RealtimePushFunction, err)
	}
	a.Metrics = app.LambdaMetrics(realtiming.RealtimePushFunction)
	app.Start(realtiming.RealtimePushFunction, realtiming.Push(a, sender, realtiming.FanoutQueue()).HandleStream, nil)
}
