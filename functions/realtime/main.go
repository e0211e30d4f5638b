// Command realtime is RealtimeFunction: the WebSocket API's $default route
// (subscribe, ping), answering through API Gateway's Management API.
package main

import (
	"context"

	"github.com/chatbridge/chat/pkg/app"
)

func main() {
	app.InitLambdaLogger()
	a, sender, err := app.RealtimeFromEnv(context.Background())
	if err != nil {
		app.Exit(app.RealtimeFunction, err)
	}
	app.Start(app.RealtimeFunction, a.RealtimeRoute(sender).Handle, nil)
}
