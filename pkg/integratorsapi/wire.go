package integratorsapi

import (
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/delivery/attempt"
	"github.com/chatbridge/chat/pkg/dynamo/deliverystore"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/netguard"
)

// Kinds of the test functions.
const (
	Outbound = events.KindOutbound
	Support  = events.KindSupport
)

// Test builds Test<kind>WebhookFunction: one webhook.test delivery now,
// through the delivery function's network guard (OUTBOUND_ALLOW_CIDRS,
// OUTBOUND_ALLOW_ONLY), to the webhook as the delivery store reads it.
func Test(kind string) app.HTTPConstructor {
	return func(a *app.App) (http.Handler, error) {
		g, err := netguard.FromEnv(app.EnvOutboundAllowCIDRS, app.EnvOutboundAllowOnly)
		if err != nil {
			return nil, err
		}
		st := deliverystore.New(a.DB, a.Table)
		d := &attempt.Deliverer{Client: g.Client(), Now: a.Now}
		return TestWebhookHandler(a.Authenticator(), kind, st, &attempt.Tester{Deliverer: d, Log: st, IDs: a.IDs}), nil
	}
}
