// Command deliver-webhooks is DeliverWebhooksFunction: it consumes the
// delivery queue and its slow lane and makes one attempt of each delivery
// (contract section 11), sending a delayed message of its own for each
// retry (docs/delivery.md).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/awsenv"
)

const function = "DeliverWebhooksFunction"

func main() {
	app.InitLambdaLogger()
	h, err := handler(context.Background())
	app.Start(function, h, err)
}

// handler builds the deliverer from the environment.
func handler(ctx context.Context) (func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), error) {
	a, env, err := app.FromEnv(ctx, awsenv.EnvDeliveryQueueURL, awsenv.EnvSlowDeliveryQueueURL)
	if err != nil {
		return nil, err
	}
	d, err := delivering.Deliverer(a, env[awsenv.EnvDeliveryQueueURL], env[awsenv.EnvSlowDeliveryQueueURL])
	if err != nil {
		return nil, err
	}
	return d.HandleSQS, nil
}
