// Command outbox-relay is OutboxRelayFunction: it forwards each message
// inserted in the table (read from its DynamoDB stream) to the translation
// queue.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
)

const function = "OutboxRelayFunction"

func main() {
	app.InitLambdaLogger()
	a, env, err := app.FromEnv(context.Background(), awsenv.EnvQueueURL)
	if err != nil {
		app.Exit(function, err)
	}
	lambda.Start(a.Relay(env[awsenv.EnvQueueURL]).HandleStream)
}
