package app

import (
	"fmt"
	"net/http"

	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/netguard"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
)

// EnvOutboundAllowCIDRS lists the target ranges (comma-separated CIDRs)
// exempt from the blocked ranges, where http is also accepted (contract
// section 11). Empty in AWS.
const EnvOutboundAllowCIDRS = "OUTBOUND_ALLOW_CIDRS"

// WebhookService is webhook management on the app's store and clock.
func (a *App) WebhookService() (*webhooks.Service, error) {
	allow, err := netguard.ParseAllow(awsenv.Get(EnvOutboundAllowCIDRS, ""))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvOutboundAllowCIDRS, err)
	}
	return &webhooks.Service{Store: a.Store, IDs: a.IDs, Now: a.Now, Allow: allow}, nil
}

// httpFunctions builds, by logical id, the handlers of the HTTP functions
// that need nothing but the table (and the cursor key): their main.go is
// one line, RunHTTP.
var httpFunctions = map[string]func(a *App) (http.Handler, error){
	"ListInboundWebhooksFunction": func(a *App) (http.Handler, error) {
		return webhooksapi.InboundWebhooksHandler(a.auth(), a.Store, a.Cursor), nil
	},
	"ListAuditEventsFunction": withWebhooks(func(a *App, m *webhooks.Service) http.Handler {
		return webhooksapi.AuditEventsHandler(a.auth(), m, a.Cursor)
	}),
}

func withWebhooks(build func(a *App, m *webhooks.Service) http.Handler) func(a *App) (http.Handler, error) {
	return func(a *App) (http.Handler, error) {
		m, err := a.WebhookService()
		if err != nil {
			return nil, err
		}
		return build(a, m), nil
	}
}

func init() {
	for _, k := range []struct {
		kind webhooks.Kind
		name string
	}{{webhooks.Inbound, "Inbound"}, {webhooks.Outbound, "Outbound"}, {webhooks.Support, "Support"}} {
		kind := k.kind
		httpFunctions["Create"+k.name+"WebhookFunction"] = withWebhooks(func(a *App, m *webhooks.Service) http.Handler {
			return webhooksapi.CreateWebhookHandler(kind, a.auth(), m)
		})
		httpFunctions["Update"+k.name+"WebhookFunction"] = withWebhooks(func(_ *App, m *webhooks.Service) http.Handler {
			return webhooksapi.ChangeWebhookHandler(kind, m)
		})
		httpFunctions["Delete"+k.name+"WebhookFunction"] = withWebhooks(func(_ *App, m *webhooks.Service) http.Handler {
			return webhooksapi.DeleteWebhookHandler(kind, m)
		})
		httpFunctions["Rotate"+k.name+"WebhookSecretFunction"] = withWebhooks(func(_ *App, m *webhooks.Service) http.Handler {
			return webhooksapi.RotateWebhookHandler(kind, m)
		})
	}
}

// registeredHandlers builds every registered function's handler.
func (a *App) registeredHandlers(into map[string]http.Handler) error {
	for id, build := range httpFunctions {
		h, err := build(a.For(id))
		if err != nil {
			return err
		}
		into[id] = h
	}
	return nil
}
