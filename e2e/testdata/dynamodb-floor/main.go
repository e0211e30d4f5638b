// Command dynamodb-floor is the minimal function plus a DynamoDB client
// built from the environment, as every function with a table builds one:
// the floor of such a function's cold init. The SDK's package initialisers
// (the DynamoDB client's serialisation schemas above all) run in it as in
// every function that links the client; what a function's cold init costs
// beyond this floor is its own (docs/performance.md).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/awsenv"
)

func main() {
	cfg, err := awsenv.Load(context.Background())
	if err != nil {
		panic(err)
	}
	db := dynamodb.NewFromConfig(cfg)
	lambda.Start(func() { _ = db })
}
