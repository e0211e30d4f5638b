// Command outbox-relay is OutboxRelayFunction: it forwards each message
// inserted in the table (read from its DynamoDB stream) to the translation
// queue, and the events the stream reports to the delivery queue.
package main

import (
	"context"

	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/dynamo/relaystore"
	"github.com/chatbridge/chat/pkg/dynamo/translationstore"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
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
	r := &relay.Relay{Queue: sqsqueue.New(sqs.NewFromConfig(a.AWS), env[awsenv.EnvQueueURL]),
		Events: delivering.Fanout(a, env[awsenv.EnvDeliveryQueueURL]), Parking: relaystore.New(a.DB, a.Table), Translations: translationstore.New(a.DB, a.Table)}
	return r.HandleStream, nil
}
