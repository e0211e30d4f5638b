// Command fallback is FallbackFunction, API Gateway's $default route: it
// answers every request that matched no route with the contract's JSON 404,
// or 405 with Allow when the path is a known route's. It needs no
// configuration and links no AWS SDK client, so it starts fast.
package main

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/chatbridge/chat/pkg/httpapi"
)

func main() {
	slog.SetDefault(lambdacontext.NewLogger())
	lambda.Start(handler())
}

// handler serves no route of its own: every request gets the mux's JSON
// 404 or 405.
func handler() func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return httpadapter.NewV2(httpapi.Mux(nil)).ProxyWithContext
}
