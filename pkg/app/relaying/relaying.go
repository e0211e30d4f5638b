// Package relaying builds the outbox relay (the table's stream to the
// translation queue and the events' deliveries) from the app, for the
// OutboxRelayFunction, chatctl serve and chatctl's replay alike. It is
// apart from package delivering so that the delivery functions do not
// link the relay.
package relaying

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/dynamo/relaystore"
	"github.com/chatbridge/chat/pkg/dynamo/translationstore"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// Fanout builds the relay's event fan-out onto the delivery queue at
// deliveryURL.
func Fanout(a *app.App, deliveryURL string) *relay.Fanout {
	return fanout(a, sqs.NewFromConfig(a.AWS), deliveryURL)
}

func fanout(a *app.App, client *sqs.Client, deliveryURL string) *relay.Fanout {
	return &relay.Fanout{Store: relaystore.New(a.DB, a.Table), Queue: sqsqueue.New(client, deliveryURL), Now: a.Now,
		View: a.Renderer(attachments.EventURLTTL)}
}

// Relay builds the outbox relay: translation jobs onto the queue at
// translationURL, events onto the delivery queue at deliveryURL (one SQS
// client for both), records it cannot process parked, a deleted message's
// translations removed.
func Relay(a *app.App, translationURL, deliveryURL string) *relay.Relay {
	client := sqs.NewFromConfig(a.AWS)
	return &relay.Relay{Queue: sqsqueue.New(client, translationURL), Events: fanout(a, client, deliveryURL),
		Parking: relaystore.New(a.DB, a.Table), Translations: translationstore.New(a.DB, a.Table)}
}

// Logical ids of the relay's and the sweep's functions.
const (
	Function      = "OutboxRelayFunction"
	SweepFunction = "TranslationSweepFunction"
)

// FromEnv builds the outbox relay's Lambda handler from its environment
// (TABLE_NAME, TRANSLATION_QUEUE_URL, DELIVERY_QUEUE_URL).
func FromEnv(ctx context.Context) (func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error), error) {
	a, env, err := app.FromEnv(ctx, awsenv.EnvQueueURL, awsenv.EnvDeliveryQueueURL)
	if err != nil {
		return nil, err
	}
	return Relay(a, env[awsenv.EnvQueueURL], env[awsenv.EnvDeliveryQueueURL]).HandleStream, nil
}

// SweepFromEnv builds the translation sweep's Lambda handler from its
// environment (TABLE_NAME, TRANSLATION_QUEUE_URL): messages left
// untranslated are queued again.
func SweepFromEnv(ctx context.Context) (func(context.Context, events.CloudWatchEvent) (relay.SweepResult, error), error) {
	a, env, err := app.FromEnv(ctx, awsenv.EnvQueueURL)
	if err != nil {
		return nil, err
	}
	s := &relay.Sweep{Store: translationstore.New(a.DB, a.Table), Queue: sqsqueue.New(sqs.NewFromConfig(a.AWS), env[awsenv.EnvQueueURL]),
		Now: a.Now, Metrics: app.LambdaMetrics(SweepFunction)}
	return s.HandleSchedule, nil
}
