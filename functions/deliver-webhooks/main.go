// Command deliver-webhooks is DeliverWebhooksFunction: it consumes the
// delivery queue and its slow lane and makes one attempt of each delivery
// (contract section 11), sending a delayed message of its own for each
// retry (docs/delivery.md).
package main

import (
	"context"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/delivering"
)

func main() {
	app.InitLambdaLogger()
	h, err := delivering.FromEnv(context.Background())
	app.Start(delivering.Function, h, err)
}
