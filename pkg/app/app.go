// Package app is the composition root: it builds each function's handler
// from its dependencies, so that every Lambda's main.go and `chatctl serve`
// run identical handlers on identical routes.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/emf"
	"github.com/chatbridge/chat/pkg/guestpage"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/roomsapi"
	"github.com/chatbridge/chat/pkg/webhooksapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// App holds the dependencies shared by the handlers.
type App struct {
	AWS   aws.Config
	Store *dynamo.Store
	IDs   *chat.IDs
	Now   chat.Clock
	// Cursor signs list cursors; nil unless CURSOR_KEY is set.
	Cursor *cursor.Codec
	// Metrics records CloudWatch metrics (EMF on stdout); nil records none.
	Metrics emf.Recorder
	// Identity, when set, gives the configuration function's calls are
	// made with (awsenv.ForFunction): local runs and tests build each
	// handler as its own function, so that the local stack holds it to
	// that function's policy. Nil in AWS, where each function is its own
	// process with its own role.
	Identity func(function string) aws.Config
}

// For returns the App that function's handler is built on: a itself, or,
// when Identity is set, a copy whose clients make their calls as function.
func (a *App) For(function string) *App {
	if a.Identity == nil {
		return a
	}
	b := *a
	b.AWS = a.Identity(function)
	b.Store = dynamo.New(dynamodb.NewFromConfig(b.AWS), a.Store.Table())
	b.Identity = nil
	return &b
}

// New builds an App on table using cfg.
func New(cfg aws.Config, table string) *App {
	return &App{
		AWS:   cfg,
		Store: dynamo.New(dynamodb.NewFromConfig(cfg), table),
		IDs:   chat.NewIDs(),
		Now:   time.Now,
	}
}

// FromEnv loads the AWS configuration and TABLE_NAME plus the variables in
// extra; a missing one is an error naming it.
func FromEnv(ctx context.Context, extra ...string) (*App, map[string]string, error) {
	env, err := awsenv.Require(append([]string{awsenv.EnvTable}, extra...)...)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := awsenv.Load(ctx)
	if err != nil {
		return nil, nil, err
	}
	a := New(cfg, env[awsenv.EnvTable])
	if key := awsenv.Get(awsenv.EnvCursorKey, ""); key != "" {
		if a.Cursor, err = cursor.New([]byte(key)); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", awsenv.EnvCursorKey, err)
		}
	}
	return a, env, nil
}

// JoinHandler serves JoinRoomFunction.
func (a *App) JoinHandler() http.Handler {
	return roomsapi.JoinHandler(&rooms.Service{Store: a.Store, IDs: a.IDs, Now: a.Now}, a.Metrics)
}

// EnvRealtimeURL names the realtime API's URL (wss://...) in the guest
// page function's environment; unset, the page connects to its own
// origin's /realtime (chatctl serve).
const EnvRealtimeURL = "REALTIME_URL"

// Auth is the one workspace authenticator every workspace endpoint uses.
func (a *App) Auth() *workspaces.Authenticator { return a.auth() }

// auth is the one workspace authenticator every workspace endpoint uses.
func (a *App) auth() *workspaces.Authenticator {
	return &workspaces.Authenticator{Tokens: a.Store}
}

// OutboundWebhooksHandler serves ListOutboundWebhooksFunction.
func (a *App) OutboundWebhooksHandler() http.Handler {
	return webhooksapi.OutboundWebhooksHandler(a.auth(), a.Store, a.Cursor)
}

// SupportWebhooksHandler serves ListSupportWebhooksFunction.
func (a *App) SupportWebhooksHandler() http.Handler {
	return webhooksapi.SupportWebhooksHandler(a.auth(), a.Store, a.Cursor)
}

// Handlers returns every HTTP function's handler by logical id, each built
// once (a local server keeps their caches warm like a Lambda does) on
// a.For(its function).
func (a *App) Handlers() (map[string]http.Handler, error) {
	ttl, err := WebhookCacheTTL()
	if err != nil {
		return nil, err
	}
	handlers := map[string]http.Handler{
		"InboundWebhookFunction":       a.For("InboundWebhookFunction").InboundHandler(ttl),
		"ListInboundRequestsFunction":  a.For("ListInboundRequestsFunction").RequestLogHandler(),
		"JoinRoomFunction":             a.For("JoinRoomFunction").JoinHandler(),
		"ListGuestMessagesFunction":    a.For("ListGuestMessagesFunction").GuestMessagesHandler(),
		"PostGuestMessageFunction":     a.For("PostGuestMessageFunction").PostGuestMessageHandler(),
		"ListOutboundWebhooksFunction": a.For("ListOutboundWebhooksFunction").OutboundWebhooksHandler(),
		"ListSupportWebhooksFunction":  a.For("ListSupportWebhooksFunction").SupportWebhooksHandler(),
		"ListChannelsFunction":         a.For("ListChannelsFunction").ChannelsHandler(),
		"ListChannelMessagesFunction":  a.For("ListChannelMessagesFunction").ChannelMessagesHandler(),
		"PostChannelMessageFunction":   a.For("PostChannelMessageFunction").PostChannelMessageHandler(),
		"CreateRoomFunction":           a.For("CreateRoomFunction").CreateRoomHandler(),
		"ListRoomsFunction":            a.For("ListRoomsFunction").RoomsHandler(),
		"CloseRoomFunction":            a.For("CloseRoomFunction").CloseRoomHandler(),
		httpapi.GuestPageFunction:      guestpage.GuestPageHandler(os.Getenv(EnvRealtimeURL)),
	}
	if err := a.registeredHandlers(handlers); err != nil {
		return nil, err
	}
	return handlers, nil
}

// InitLambdaLogger makes the default logger write JSON lines carrying the
// Lambda request id.
func InitLambdaLogger() {
	slog.SetDefault(lambdacontext.NewLogger())
}

// MetricsNamespace is the CloudWatch namespace of the service's metrics.
const MetricsNamespace = "ChatService"

// LambdaMetrics returns the EMF recorder of function, on stdout.
func LambdaMetrics(function string) emf.Recorder {
	return emf.New(os.Stdout, MetricsNamespace, map[string]string{"Function": function})
}

// Exit logs an initialisation failure and exits non-zero: a function with
// missing configuration must fail at init, never inside a request.
func Exit(function string, err error) {
	slog.Error("init failed", "function", function, "error", err.Error())
	fmt.Fprintf(os.Stderr, "%s: init failed: %v\n", function, err)
	os.Exit(1)
}

// HTTPHandler is the Lambda handler of an HTTP function behind API
// Gateway's HTTP API (payload format 2.0).
type HTTPHandler = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// HTTPLambda adapts handlers (keyed by function logical id) to Lambda with
// the V2 adapter, keeping the request context and the headers as sent
// (httpapi.Lambda).
func HTTPLambda(handlers map[string]http.Handler) HTTPHandler {
	return httpapi.Lambda(httpapi.Mux(handlers))
}

// Start runs handler as the function's Lambda handler, or exits at init
// with err logged.
func Start[H any](function string, handler H, err error) {
	if err != nil {
		Exit(function, err)
	}
	lambda.Start(handler)
}
