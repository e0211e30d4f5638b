package app

import (
	"context"
	"fmt"
	"net/http"

	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/httpapi"
)

// cursorLists are the HTTP functions that sign list cursors: only they
// require CURSOR_KEY (the template gives it to them alone).
var cursorLists = map[string]bool{
	"ListGuestMessagesFunction":    true,
	"ListOutboundWebhooksFunction": true,
	"ListSupportWebhooksFunction":  true,
	"ListInboundRequestsFunction":  true,
	"ListChannelsFunction":         true,
	"ListChannelMessagesFunction":  true,
	"ListRoomsFunction":            true,
	"ListInboundWebhooksFunction":  true,
	"ListAuditEventsFunction":      true,
}

// NeedsCursorKey reports whether HTTP function function requires
// CURSOR_KEY at init.
func NeedsCursorKey(function string) bool { return cursorLists[function] }

// HTTPFromEnv builds the Lambda handler of HTTP function function (a
// logical id of httpapi.Routes) from the environment: the same handler
// Handlers gives `chatctl serve`, with the function's metrics. Errors: a
// function that serves no route, a missing or malformed variable.
func HTTPFromEnv(ctx context.Context, function string) (HTTPHandler, error) {
	if _, ok := httpapi.RouteOf(function); !ok {
		return nil, fmt.Errorf("app: %s serves no route of httpapi.Routes", function)
	}
	var required []string
	if cursorLists[function] {
		required = append(required, awsenv.EnvCursorKey)
	}
	a, _, err := FromEnv(ctx, required...)
	if err != nil {
		return nil, err
	}
	a.Metrics = LambdaMetrics(function)
	handlers, err := a.Handlers()
	if err != nil {
		return nil, err
	}
	h, ok := handlers[function]
	if !ok {
		return nil, fmt.Errorf("app: no handler for %s", function)
	}
	return HTTPLambda(map[string]http.Handler{function: h}), nil
}

// RunHTTP is the whole main of an HTTP function: JSON logs, the handler
// built once from the environment, then Lambda's loop; a configuration
// error exits at init.
func RunHTTP(function string) {
	InitLambdaLogger()
	h, err := HTTPFromEnv(context.Background(), function)
	Start(function, h, err)
}
