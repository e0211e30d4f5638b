package inboundapi

import (
	"net/http"
	"time"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/dynamo/inboundstore"
	"github.com/chatbridge/chat/pkg/inbound"
)

// Service is the inbound webhook decision service with its webhook
// settings cached for ttl.
func Service(a *app.App, ttl time.Duration) *inbound.Service {
	st := inboundstore.New(a.DB, a.Table)
	cache := &inbound.Cache{Source: st, TTL: ttl, NegativeTTL: min(ttl, 5*time.Second), Now: a.Now}
	return &inbound.Service{Configs: cache, Quota: st, Store: st, Attachments: a.Attachments(), IDs: a.IDs, Now: a.Now}
}

// Inbound builds InboundWebhookFunction, with WEBHOOK_CACHE_TTL.
func Inbound(a *app.App) (http.Handler, error) {
	ttl, err := app.WebhookCacheTTL()
	if err != nil {
		return nil, err
	}
	return InboundHandler(Service(a, ttl), a.Now, a.Metrics), nil
}
