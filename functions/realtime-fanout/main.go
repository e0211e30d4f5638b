// Command realtime-fanout is RealtimeFanoutFunction: it reads the fan-out
// queue and sends each push job's payload to its connections, queueing
// again what it could not send.
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
		app.Exit(realtiming.RealtimeFanoutFunction, err)
	}
	a.Metrics = app.LambdaMetrics(realtiming.RealtimeFanoutFunction)
	app.Start(realtiming.RealtimeFanoutFunction, realtiming.Fanout(a, sender, realtiming.FanoutQueue()).HandleSQS, nil)
}
