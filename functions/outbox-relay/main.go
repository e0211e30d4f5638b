// Command outbox-relay is OutboxRelayFunction: it forwards each message
// inserted in the table (read from its DynamoDB stream) to the translation
// queue, and the events the stream reports to the delivery queue.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/relaying"
	"github.com/chatbridge/chat/pkg/awsenv"
)

const function = "OutboxRelayFunction"

func main() {
	app.InitLambdaLogger()
	h, err := handler(context.Background())
	app.Start(function, h, err)
}

// handler builds the relay from the environment.
func handler(ctx context.Context) (func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error), error) {
	a, env, err := app.FromEnv(ctx, awsenv.EnvQueueURL, awsenv.EnvDeliveryQueueURL)
	if err != nil {
		return nil, err
	}
	return relaying.Relay(a, env[awsenv.EnvQueueURL], env[awsenv.EnvDeliveryQueueURL]).HandleStream, nil
}
