// Command translate is TranslateFunction: it consumes the translation
// queue and stores each message's translations for its readers.
package main

import (
	"context"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/translating"
)

func main() {
	app.InitLambdaLogger()
	h, err := translating.FromEnv(context.Background())
	app.Start(translating.Function, h, err)
}
