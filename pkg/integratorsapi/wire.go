package integratorsapi

import (
	"context"
	"net/http"
	"time"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/delivery/attempt"
	"github.com/chatbridge/chat/pkg/dynamo/deliverystore"
	"github.com/chatbridge/chat/pkg/dynamo/webhookstore"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

// tester adapts attempt.Tester to a managed webhook: its settings as
// management read them, its secrets as the delivery function would use
// them (the previous one until it expires).
type tester struct {
	t   *attempt.Tester
	now func() time.Time
}

func (t tester) Test(ctx context.Context, w webhooks.Webhook) (delivery.Attempt, error) {
	secrets := [][]byte{[]byte(w.SigningSecret)}
	if w.PreviousSigningSecret != "" && t.now().Before(w.PreviousExpiresAt) {
		secrets = append(secrets, []byte(w.PreviousSigningSecret))
	}
	return t.t.Test(ctx, delivery.Webhook{ID: w.ID, Kind: string(w.Kind), WorkspaceID: w.WorkspaceID,
		Key: webhookstore.ListedSK(w), URL: w.URL, Active: w.Active, Secrets: secrets})
}

// Test builds Test<kind>WebhookFunction: one webhook.test delivery now,
// through the delivery function's network guard.
func Test(kind webhooks.Kind) app.HTTPConstructor {
	return func(a *app.App) (http.Handler, error) {
		_, m, err := webhooksapi.Service(a)
		if err != nil {
			return nil, err
		}
		g, err := delivering.Guard()
		if err != nil {
			return nil, err
		}
		d := &attempt.Deliverer{Client: g.Client(), Now: a.Now}
		log := deliverystore.New(a.DB, a.Table)
		return TestWebhookHandler(kind, m, tester{t: &attempt.Tester{Deliverer: d, Log: log, IDs: a.IDs}, now: a.Now}), nil
	}
}
