// Package delivering builds the event delivery's functions (contract
// section 11) from the app: the relay's fan-out, the delivery function and
// the delivery log's HTTP functions. It is apart from package app so that
// the other HTTP functions do not link the SQS client.
package delivering

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"

	"context"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/netguard"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// Environment of event delivery (contract section 11).
const (
	EnvDeliverySchedule  = "DELIVERY_SCHEDULE"
	EnvOutboundAllowOnly = "OUTBOUND_ALLOW_ONLY"
)

// Guard reads OUTBOUND_ALLOW_CIDRS and OUTBOUND_ALLOW_ONLY.
func Guard() (*netguard.Guard, error) {
	allow, err := netguard.ParseCIDRs(os.Getenv(app.EnvOutboundAllowCIDRS))
	if err != nil {
		return nil, err
	}
	only := strings.TrimSpace(os.Getenv(EnvOutboundAllowOnly))
	if only != "" && only != "true" && only != "false" {
		return nil, fmt.Errorf("app: %s=%q, want true or false", EnvOutboundAllowOnly, only)
	}
	return &netguard.Guard{Allow: allow, AllowOnly: only == "true"}, nil
}

// Deliverer builds the delivery function's deliverer on the queue at
// queueURL, from the environment (DELIVERY_SCHEDULE, OUTBOUND_ALLOW_*).
func Deliverer(a *app.App, queueURL string) (*delivery.Deliverer, error) {
	sched, err := delivery.ParseSchedule(os.Getenv(EnvDeliverySchedule))
	if err != nil {
		return nil, err
	}
	g, err := Guard()
	if err != nil {
		return nil, err
	}
	ttl, err := app.WebhookCacheTTL()
	if err != nil {
		return nil, err
	}
	return &delivery.Deliverer{Store: a.Store, Queue: sqsqueue.New(sqs.NewFromConfig(a.AWS), queueURL), Client: g.Client(),
		Schedule: sched, Now: a.Now, Rand: rand.Float64, CacheTTL: ttl, Limiter: a.Store}, nil
}

// Fanout builds the relay's event fan-out onto the delivery queue.
func Fanout(a *app.App, queueURL string) *relay.Fanout {
	return &relay.Fanout{Store: a.Store, Queue: sqsqueue.New(sqs.NewFromConfig(a.AWS), queueURL), Now: a.Now}
}

// listOutbound serves ListOutboundDeliveriesFunction.
func listOutbound(a *app.App) http.Handler {
	return httpapi.DeliveriesHandler(a.Auth(), events.KindOutbound, a.Store, a.Cursor)
}

// listSupport serves ListSupportDeliveriesFunction.
func listSupport(a *app.App) http.Handler {
	return httpapi.DeliveriesHandler(a.Auth(), events.KindSupport, a.Store, a.Cursor)
}

// redeliverer queues redeliveries on DELIVERY_QUEUE_URL.
func redeliverer(a *app.App) *delivery.Redeliverer {
	return &delivery.Redeliverer{Store: a.Store, Queue: sqsqueue.New(sqs.NewFromConfig(a.AWS), os.Getenv(awsenv.EnvDeliveryQueueURL))}
}

// redeliverOutbound serves RedeliverOutboundFunction.
func redeliverOutbound(a *app.App) http.Handler {
	return httpapi.RedeliverHandler(a.Auth(), events.KindOutbound, redeliverer(a))
}

// redeliverSupport serves RedeliverSupportFunction.
func redeliverSupport(a *app.App) http.Handler {
	return httpapi.RedeliverHandler(a.Auth(), events.KindSupport, redeliverer(a))
}

// Handlers are the delivery log's HTTP functions, by logical id, each
// built on a.For(its function).
func Handlers(a *app.App) map[string]http.Handler {
	hs := map[string]http.Handler{
		"ListOutboundDeliveriesFunction": listOutbound(a.For("ListOutboundDeliveriesFunction")),
		"ListSupportDeliveriesFunction":  listSupport(a.For("ListSupportDeliveriesFunction")),
		"RedeliverOutboundFunction":      redeliverOutbound(a.For("RedeliverOutboundFunction")),
		"RedeliverSupportFunction":       redeliverSupport(a.For("RedeliverSupportFunction")),
	}
	integratorHandlers(a, hs)
	return hs
}

// Serves reports whether function is one of Handlers'.
func Serves(function string) bool {
	switch function {
	case "ListOutboundDeliveriesFunction", "ListSupportDeliveriesFunction", "RedeliverOutboundFunction", "RedeliverSupportFunction":
		return true
	}
	_, ok := integratorFunctions[function]
	return ok
}

// NeedsCursorKey reports whether delivery log function function signs
// list cursors (and so requires CURSOR_KEY).
func NeedsCursorKey(function string) bool {
	return Serves(function) && strings.HasPrefix(function, "List")
}

// HTTPFromEnv builds the Lambda handler of delivery log function function
// from the environment: the lists need CURSOR_KEY, redelivery
// DELIVERY_QUEUE_URL.
func HTTPFromEnv(ctx context.Context, function string) (app.HTTPHandler, error) {
	if !Serves(function) {
		return nil, fmt.Errorf("delivering: %s is not a delivery log function", function)
	}
	var required []string
	switch {
	case NeedsCursorKey(function):
		required = []string{awsenv.EnvCursorKey}
	case needsQueue(function):
		required = []string{awsenv.EnvDeliveryQueueURL}
	}
	a, _, err := app.FromEnv(ctx, required...)
	if err != nil {
		return nil, err
	}
	if _, err := Guard(); err != nil {
		return nil, err // fail at init, not in a request
	}
	a.Metrics = app.LambdaMetrics(function)
	return app.HTTPLambda(map[string]http.Handler{function: Handlers(a)[function]}), nil
}

// RunHTTP is the whole main of a delivery log function.
func RunHTTP(function string) {
	app.InitLambdaLogger()
	h, err := HTTPFromEnv(context.Background(), function)
	app.Start(function, h, err)
}
