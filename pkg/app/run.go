package app

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/httpapi"
)

// HTTPConstructor builds an HTTP function's handler from the App: each
// capability's API package has one per function it serves, and the
// function's main.go passes its own to RunHTTP.
type HTTPConstructor func(a *App) (http.Handler, error)

// HTTPHandler is the Lambda handler of an HTTP function behind API
// Gateway's HTTP API (payload format 2.0).
type HTTPHandler = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// HTTPLambda adapts handlers (keyed by function logical id) to Lambda with
// the V2 adapter, keeping the request context and the headers as sent
// (httpapi.Lambda).
func HTTPLambda(handlers map[string]http.Handler) HTTPHandler {
	return httpapi.Lambda(httpapi.Mux(handlers))
}

// HTTPFromEnv builds the Lambda handler of HTTP function function (a
// logical id of httpapi.Routes) with build, from the environment and what
// the function's route needs (httpapi.Needs): the same handler `chatctl
// serve` mounts, with the function's metrics. Errors: a function that
// serves no route, a missing or malformed variable.
func HTTPFromEnv(ctx context.Context, function string, build HTTPConstructor) (HTTPHandler, error) {
	rt, ok := httpapi.RouteOf(function)
	if !ok {
		return nil, fmt.Errorf("app: %s serves no route of httpapi.Routes", function)
	}
	var required []string
	if rt.Needs&httpapi.NeedsCursorKey != 0 {
		required = append(required, awsenv.EnvCursorKey)
	}
	if rt.Needs&httpapi.NeedsDeliveryQueue != 0 {
		required = append(required, awsenv.EnvDeliveryQueueURL)
	}
	a, _, err := FromEnv(ctx, required...)
	if err != nil {
		return nil, err
	}
	a.Metrics = LambdaMetrics(function)
	h, err := build(a)
	if err != nil {
		return nil, err
	}
	return HTTPLambda(map[string]http.Handler{function: h}), nil
}

// RunHTTP is the whole main of an HTTP function: JSON logs, the handler
// built once by build from the environment, then Lambda's loop; a
// configuration error exits at init.
func RunHTTP(function string, build HTTPConstructor) {
	InitLambdaLogger()
	h, err := HTTPFromEnv(context.Background(), function, build)
	Start(function, h, err)
}
