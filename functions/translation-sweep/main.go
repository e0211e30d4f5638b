// Command translation-sweep is TranslationSweepFunction: every few minutes
// it queues again the accepted messages whose translation has not finished
// long after they were written (docs/delivery.md, "The sweep").
package main

import (
	"context"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/relaying"
)

func main() {
	app.InitLambdaLogger()
	h, err := relaying.SweepFromEnv(context.Background())
	app.Start(relaying.SweepFunction, h, err)
}
