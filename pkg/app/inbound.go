package app

import (
	"fmt"
	"net/http"
	"time"

	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/inbound"
	"github.com/chatbridge/chat/pkg/inboundapi"
)

// EnvWebhookCacheTTL sets how long a warm function keeps a webhook's
// settings in memory (a Go duration, default 30s).
const EnvWebhookCacheTTL = "WEBHOOK_CACHE_TTL"

// WebhookCacheTTL reads EnvWebhookCacheTTL.
func WebhookCacheTTL() (time.Duration, error) {
	v := awsenv.Get(EnvWebhookCacheTTL, "30s")
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s: %q is not a non-negative duration", EnvWebhookCacheTTL, v)
	}
	return d, nil
}

// InboundService is the inbound webhook decision service with its webhook
// settings cached for ttl.
func (a *App) InboundService(ttl time.Duration) *inbound.Service {
	cache := &inbound.Cache{Source: a.Store, TTL: ttl, NegativeTTL: min(ttl, 5*time.Second), Now: a.Now}
	return &inbound.Service{Configs: cache, Quota: a.Store, Store: a.Store, IDs: a.IDs, Now: a.Now}
}

// InboundHandler serves InboundWebhookFunction.
func (a *App) InboundHandler(ttl time.Duration) http.Handler {
	return inboundapi.InboundHandler(a.InboundService(ttl), a.Now, a.Metrics)
}

// RequestLogHandler serves ListInboundRequestsFunction.
func (a *App) RequestLogHandler() http.Handler {
	return inboundapi.RequestLogHandler(a.auth(), a.Store, a.Cursor)
}
