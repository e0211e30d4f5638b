// Command realtime is RealtimeFunction: the WebSocket API's $default route
// (subscribe, ping), answering through API Gateway's Management API.
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
		app.Exit(realtiming.RealtimeFunction, err)
	}
	app.Start(realtiming.RealtimeFunction, realtiming.Route(a, sender).Handle, nil)
}
