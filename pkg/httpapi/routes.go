package httpapi

import (
	"net/http"
	"sort"
	"strings"

	"github.com/chatbridge/chat/pkg/chat"
)

// Route is one endpoint: the logical id of the function that serves it in
// template.yaml, and its method and path as API Gateway declares them. Path
// parameters use the same {name} syntax in API Gateway and net/http.
type Route struct {
	Function string
	Method   string
	Path     string
}

// Routes is every HTTP route of the service. template.yaml declares exactly
// these (a test fails when they drift), and `chatctl serve` mounts them.
var Routes = []Route{
	{"JoinRoomFunction", http.MethodPost, "/api/v1/external/rooms/{room_id}/guests"},
	{"ListGuestMessagesFunction", http.MethodGet, "/api/v1/external/rooms/{room_id}/messages"},
	{"PostGuestMessageFunction", http.MethodPost, "/api/v1/external/rooms/{room_id}/messages"},
	{"ListOutboundWebhooksFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/outbound-webhooks"},
	{"ListSupportWebhooksFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/support-webhooks"},
	{"ListInboundRequestsFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}/requests"},
	{"InboundWebhookFunction", http.MethodPost, "/webhooks/{webhook}/messages"},
	{"ListChannelsFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/channels"},
	{"ListChannelMessagesFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages"},
	{"PostChannelMessageFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages"},
	{"CreateRoomFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/rooms"},
	{"ListRoomsFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/rooms"},
	{"CloseRoomFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/rooms/{room_id}/close"},
	// Webhook management (contract section 10). Inbound webhooks are
	// {webhook} in every path, as in their request log's.
	{"ListInboundWebhooksFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/inbound-webhooks"},
	{"CreateInboundWebhookFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/inbound-webhooks"},
	{"UpdateInboundWebhookFunction", http.MethodPatch, "/api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}"},
	{"DeleteInboundWebhookFunction", http.MethodDelete, "/api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}"},
	{"RotateInboundWebhookSecretFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}/rotate-secret"},
	{"CreateOutboundWebhookFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/outbound-webhooks"},
	{"UpdateOutboundWebhookFunction", http.MethodPatch, "/api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}"},
	{"DeleteOutboundWebhookFunction", http.MethodDelete, "/api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}"},
	{"RotateOutboundWebhookSecretFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/rotate-secret"},
	{"CreateSupportWebhookFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/support-webhooks"},
	{"UpdateSupportWebhookFunction", http.MethodPatch, "/api/v1/workspaces/{workspace_id}/support-webhooks/{id}"},
	{"DeleteSupportWebhookFunction", http.MethodDelete, "/api/v1/workspaces/{workspace_id}/support-webhooks/{id}"},
	{"RotateSupportWebhookSecretFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/support-webhooks/{id}/rotate-secret"},
	{"ListAuditEventsFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/audit-events"},
	{"ListOutboundDeliveriesFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/deliveries"},
	{"ListSupportDeliveriesFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/support-webhooks/{id}/deliveries"},
	{"RedeliverOutboundFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/deliveries/{delivery_id}/redeliver"},
	{"RedeliverSupportFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/support-webhooks/{id}/deliveries/{delivery_id}/redeliver"},
	// Editing and deleting messages (contract section 13).
	{"EditChannelMessageFunction", http.MethodPatch, "/api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}"},
	{"DeleteChannelMessageFunction", http.MethodDelete, "/api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}"},
	{"EditGuestMessageFunction", http.MethodPatch, "/api/v1/external/rooms/{room_id}/messages/{message_id}"},
	{"DeleteGuestMessageFunction", http.MethodDelete, "/api/v1/external/rooms/{room_id}/messages/{message_id}"},
	{"EditWebhookMessageFunction", http.MethodPatch, "/webhooks/{webhook}/messages/{message_id}"},
	{"DeleteWebhookMessageFunction", http.MethodDelete, "/webhooks/{webhook}/messages/{message_id}"},
	// The guest page and its static files (contract section 12).
	{GuestPageFunction, http.MethodGet, "/rooms/{room_id}"},
	{GuestPageFunction, http.MethodGet, "/assets/{file}"},
}

// FallbackFunction serves API Gateway's $default route: JSON 404 and 405
// for every request no other route matched.
const FallbackFunction = "FallbackFunction"

// RouteOf returns the route served by function.
func RouteOf(function string) (Route, bool) {
	for _, rt := range Routes {
		if rt.Function == function {
			return rt, true
		}
	}
	return Route{}, false
}

// Mux mounts handlers (keyed by function logical id) on their routes,
// wrapped in the common middleware. Any other request gets a JSON 404, or a
// JSON 405 with Allow when its path is a known route's.
func Mux(handlers map[string]http.Handler) http.Handler {
	mux := http.NewServeMux()
	allow := map[string][]string{}
	for _, rt := range Routes {
		allow[rt.Path] = append(allow[rt.Path], rt.Method)
		if h, ok := handlers[rt.Function]; ok {
			mux.Handle(rt.Method+" "+rt.Path, h)
		}
	}
	// ServeMux lets a GET pattern answer HEAD; API Gateway's GET routes do
	// not match HEAD, so the deployed API answers 405 for it. Do the same.
	for _, rt := range Routes {
		if rt.Method == http.MethodGet {
			mux.HandleFunc(http.MethodHead+" "+rt.Path, func(w http.ResponseWriter, r *http.Request) {
				methodNotAllowed(w, r, allow[rt.Path])
			})
		}
	}
	for path, methods := range allow {
		sort.Strings(methods)
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			for _, m := range methods {
				if m == r.Method {
					// A route of another function: this process does not serve it.
					Error(w, r, chat.Errorf(chat.ENotFound, "The requested resource was not found."))
					return
				}
			}
			methodNotAllowed(w, r, methods)
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		Error(w, r, chat.Errorf(chat.ENotFound, "The requested resource was not found."))
	})
	return Wrap(mux)
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request, methods []string) {
	w.Header().Set("Allow", strings.Join(methods, ", "))
	msg := "This method is not supported for this route."
	if m := sanitizeMethod(r.Method); m != "" {
		msg = "The " + m + " method is not supported for this route."
	}
	Error(w, r, chat.Errorf(chat.EMethodNotAllowed, "%s", msg))
}

// sanitizeMethod keeps a client-chosen method name printable and short
// before it is echoed in a message.
func sanitizeMethod(m string) string {
	if len(m) > 16 {
		m = m[:16]
	}
	return strings.Map(func(r rune) rune {
		if r < 'A' || r > 'Z' {
			return -1
		}
		return r
	}, strings.ToUpper(m))
}
