// Command outbox-relay is OutboxRelayFunction: it forwards each message
// inserted in the table (read from its DynamoDB stream) to the translation
// queue, and the events the stream reports to the delivery queue.
package main

import (
	"context"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/relaying"
)

func main() {
	app.InitLambdaLogger()
	h, err := relaying.FromEnv(context.Background())
	app.Start(relaying.Function, h, err)
}
