// Command translate is TranslateFunction: it consumes the translation
// queue and stores each message's translations for its readers.
package main

import (
	"context"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/queueapi"
)

const function = "TranslateFunction"

func main() {
	app.InitLambdaLogger()
	h, err := handler(context.Background())
	app.Start(function, h, err)
}

// handler builds the function's Lambda handler from the environment.
func handler(ctx context.Context) (queueapi.SQSHandler, error) {
	a, _, err := app.FromEnv(ctx)
	if err != nil {
		return nil, err
	}
	a.Metrics = app.LambdaMetrics(function)
	return translating.Handler(ctx, a)
}
