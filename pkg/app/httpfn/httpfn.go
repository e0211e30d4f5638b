// Package httpfn runs an HTTP function: the Lambda handler built once from
// the environment by the constructor the function's main.go names
// (app.HTTPConstructor), on the route httpapi.Routes gives it. Apart from
// package app, so that the functions that serve no HTTP route (queues,
// streams, WebSocket) do not link the HTTP layer.
package httpfn

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/httpapi"
)

// Handler is the Lambda handler of an HTTP function behind API
// Gateway's HTTP API (payload format 2.0).
type Handler = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Lambda adapts handlers (keyed by function logical id) to Lambda with
// the V2 adapter, keeping the request context and the headers as sent
// (httpapi.Lambda).
func Lambda(handlers map[string]http.Handler) Handler {
	return httpapi.Lambda(httpapi.Mux(handlers))
}

// FromEnv builds the Lambda handler of HTTP function function (a
// logical id of httpapi.Routes) with build, from the environment and what
// the function's route needs (httpapi.Needs): the same handler `chatctl
// serve` mounts, with the function's metrics. Errors: a function that
// serves no route, a missing or malformed variable.
func FromEnv(ctx context.Context, function string, build app.HTTPConstructor) (Handler, error) {
	rt, ok := httpapi.RouteOf(function)
	if !ok {
		return nil, fmt.Errorf("httpfn: %s serves no route of httpapi.Routes", function)
	}
	var required []string
	if rt.Needs&httpapi.NeedsCursorKey != 0 {
		required = append(required, awsenv.EnvCursorKey)
	}
	if rt.Needs&httpapi.NeedsDeliveryQueue != 0 {
		required = append(required, awsenv.EnvDeliveryQueueURL)
	}
	a, _, err := app.FromEnv(ctx, required...)
	if err != nil {
		return nil, err
	}
	// cursor.Of's refusal, without linking package cursor into the
	// functions that do not page.
	if n := len(a.CursorKey); n > 0 && n < app.MinCursorKeyLen {
		return nil, fmt.Errorf("%s: cursor: key shorter than %d bytes", awsenv.EnvCursorKey, app.MinCursorKeyLen)
	}
	a.Metrics = app.LambdaMetrics(function)
	h, err := build(a)
	if err != nil {
		return nil, err
	}
	return Lambda(map[string]http.Handler{function: h}), nil
}

// Run is the whole main of an HTTP function: JSON logs, the handler
// built once by build from the environment, then Lambda's loop; a
// configuration error exits at init.
func Run(function string, build app.HTTPConstructor) {
	app.InitLambdaLogger()
	h, err := FromEnv(context.Background(), function, build)
	app.Start(function, h, err)
}
