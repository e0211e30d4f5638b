package app

import (
	"context"
	"fmt"
	"net/http"

	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/netguard"
	"github.com/chatbridge/chat/pkg/webhooks"
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
		return httpapi.InboundWebhooksHandler(a.auth(), a.Store, a.Cursor), nil
	},
	"ListAuditEventsFunction": withWebhooks(func(a *App, m *webhooks.Service) http.Handler {
		return httpapi.AuditEventsHandler(a.auth(), m, a.Cursor)
	}),
}

// cursorLists are the registered functions that sign list cursors: only
// they require CURSOR_KEY (the template gives it to them alone).
var cursorLists = map[string]bool{"ListInboundWebhooksFunction": true, "ListAuditEventsFunction": true}

// NeedsCursorKey reports whether registered function function requires
// CURSOR_KEY at init.
func NeedsCursorKey(function string) bool { return cursorLists[function] }

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
			return httpapi.CreateWebhookHandler(kind, a.auth(), m)
		})
		httpFunctions["Update"+k.name+"WebhookFunction"] = withWebhooks(func(_ *App, m *webhooks.Service) http.Handler {
			return httpapi.ChangeWebhookHandler(kind, m)
		})
		httpFunctions["Delete"+k.name+"WebhookFunction"] = withWebhooks(func(_ *App, m *webhooks.Service) http.Handler {
			return httpapi.DeleteWebhookHandler(kind, m)
		})
		httpFunctions["Rotate"+k.name+"WebhookSecretFunction"] = withWebhooks(func(_ *App, m *webhooks.Service) http.Handler {
			return httpapi.RotateWebhookHandler(kind, m)
		})
	}
}

// RegisteredHTTPFunctions returns the logical ids RunHTTP can start.
func RegisteredHTTPFunctions() []string {
	ids := make([]string, 0, len(httpFunctions))
	for id := range httpFunctions {
		ids = append(ids, id)
	}
	return ids
}

// registeredHandlers builds every registered function's handler.
func (a *App) registeredHandlers(into map[string]http.Handler) error {
	for id, build := range httpFunctions {
		h, err := build(a)
		if err != nil {
			return err
		}
		into[id] = h
	}
	return nil
}

// HTTPFromEnv builds the Lambda handler of registered HTTP function
// function from the environment.
func HTTPFromEnv(ctx context.Context, function string) (HTTPHandler, error) {
	build, ok := httpFunctions[function]
	if !ok {
		return nil, fmt.Errorf("app: no HTTP function %s is registered", function)
	}
	var required []string
	if cursorLists[function] {
		required = append(required, awsenv.EnvCursorKey)
	}
	a, _, err := FromEnv(ctx, required...)
	if err != nil {
		return nil, err
	}
	h, err := build(a)
	if err != nil {
		return nil, err
	}
	return HTTPLambda(map[string]http.Handler{function: h}), nil
}

// RunHTTP is the whole main of a registered HTTP function: JSON logs,
// the handler built once from the environment, then Lambda's loop; a
// configuration error exits at init.
func RunHTTP(function string) {
	InitLambdaLogger()
	h, err := HTTPFromEnv(context.Background(), function)
	Start(function, h, err)
}
