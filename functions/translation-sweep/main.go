// Command translation-sweep is TranslationSweepFunction: every few minutes
// it queues again the accepted messages whose translation has not finished
// long after they were written (docs/delivery.md, "The sweep").
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/dynamo/translationstore"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

const function = "TranslationSweepFunction"

func main() {
	app.InitLambdaLogger()
	h, err := handler(context.Background())
	app.Start(function, h, err)
}

// handler builds the sweep from the environment.
func handler(ctx context.Context) (func(context.Context, events.CloudWatchEvent) (relay.SweepResult, error), error) {
	a, env, err := app.FromEnv(ctx, awsenv.EnvQueueURL)
	if err != nil {
		return nil, err
	}
	s := &relay.Sweep{Store: translationstore.New(a.DB, a.Table), Queue: sqsqueue.New(sqs.NewFromConfig(a.AWS), env[awsenv.EnvQueueURL]),
		Now: a.Now, Metrics: app.LambdaMetrics(function)}
	return s.HandleSchedule, nil
}
