package delivering

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/sqsqueue"
	"github.com/chatbridge/chat/pkg/webhooks"
)

// The integrators' functions (contract section 14): test a webhook,
// recover its failed deliveries.
var integratorFunctions = map[string]func(a *app.App) (http.Handler, error){
	"TestOutboundWebhookFunction":       testFunction(webhooks.Outbound),
	"TestSupportWebhookFunction":        testFunction(webhooks.Support),
	"RecoverOutboundDeliveriesFunction": recoverFunction(webhooks.Outbound),
	"RecoverSupportDeliveriesFunction":  recoverFunction(webhooks.Support),
}

// tester adapts delivery.Tester to a managed webhook: its settings as
// management read them, its secrets as the delivery function would use
// them (the previous one until it expires).
type tester struct {
	t   *delivery.Tester
	now func() time.Time
}

func (t tester) Test(ctx context.Context, w webhooks.Webhook) (delivery.Attempt, error) {
	secrets := [][]byte{[]byte(w.SigningSecret)}
	if w.PreviousSigningSecret != "" && t.now().Before(w.PreviousExpiresAt) {
		secrets = append(secrets, []byte(w.PreviousSigningSecret))
	}
	return t.t.Test(ctx, delivery.Webhook{ID: w.ID, Kind: string(w.Kind), WorkspaceID: w.WorkspaceID,
		Key: dynamo.ListedWebhookKey(w), URL: w.URL, Active: w.Active, Secrets: secrets})
}

func testFunction(kind webhooks.Kind) func(a *app.App) (http.Handler, error) {
	return func(a *app.App) (http.Handler, error) {
		m, err := a.WebhookService()
		if err != nil {
			return nil, err
		}
		g, err := Guard()
		if err != nil {
			return nil, err
		}
		d := &delivery.Deliverer{Client: g.Client(), Now: a.Now}
		return httpapi.TestWebhookHandler(kind, m, tester{t: &delivery.Tester{Deliverer: d, Log: a.Store, IDs: a.IDs}, now: a.Now}), nil
	}
}

func recoverFunction(kind webhooks.Kind) func(a *app.App) (http.Handler, error) {
	return func(a *app.App) (http.Handler, error) {
		m, err := a.WebhookService()
		if err != nil {
			return nil, err
		}
		q := sqsqueue.New(sqs.NewFromConfig(a.AWS), os.Getenv(awsenv.EnvDeliveryQueueURL))
		return httpapi.RecoverDeliveriesHandler(kind, m, &delivery.Recoverer{Store: a.Store, Queue: q, Now: a.Now}, a.Now), nil
	}
}

// integratorHandlers adds the integrators' functions to into, each built
// on a.For(its function). One whose configuration is wrong (a malformed
// OUTBOUND_ALLOW_CIDRS, which its Lambda refuses at init) answers 500.
func integratorHandlers(a *app.App, into map[string]http.Handler) {
	for fn, build := range integratorFunctions {
		h, err := build(a.For(fn))
		if err != nil {
			slog.Error("build handler", "function", fn, "error", err.Error())
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { httpapi.Error(w, r, chat.Internal(err)) })
		}
		into[fn] = h
	}
}

// needsQueue reports whether function sends to the delivery queue.
func needsQueue(function string) bool {
	_, integrator := integratorFunctions[function]
	return !integrator || function == "RecoverOutboundDeliveriesFunction" || function == "RecoverSupportDeliveriesFunction"
}
