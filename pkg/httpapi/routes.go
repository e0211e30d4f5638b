package httpapi

import (
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/chatbridge/chat/pkg/chat"
)

// Route is one endpoint: the logical id of the function that serves it in
// template.yaml, and its method and path as API Gateway declares them. Path
// parameters use the same {name} syntax in API Gateway and net/http.
type Route struct {
	Function string
	Method   string
	Path     string
	// Needs is what the function needs beyond the table: the variables
	// it requires at init, which template.yaml gives it alone.
	Needs Needs
}

// Needs is a set of what a route's function needs beyond the table.
type Needs uint8

// What a route's function may need.
const (
	NeedsNone Needs = 0
	// NeedsCursorKey: the function signs list cursors (CURSOR_KEY).
	NeedsCursorKey Needs = 1 << iota
	// NeedsDeliveryQueue: the function queues deliveries (DELIVERY_QUEUE_URL).
	NeedsDeliveryQueue
)

// Routes is every HTTP route of the service. template.yaml declares exactly
// these (a test fails when they drift), and `chatctl serve` mounts them.
var Routes = []Route{
	{"JoinRoomFunction", http.MethodPost, "/api/v1/external/rooms/{room_id}/guests", NeedsNone},
	{"ListGuestMessagesFunction", http.MethodGet, "/api/v1/external/rooms/{room_id}/messages", NeedsCursorKey},
	{"PostGuestMessageFunction", http.MethodPost, "/api/v1/external/rooms/{room_id}/messages", NeedsNone},
	{"CreateGuestUploadFunction", http.MethodPost, "/api/v1/external/rooms/{room_id}/uploads", NeedsNone},
	{"ListOutboundWebhooksFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/outbound-webhooks", NeedsCursorKey},
	{"ListSupportWebhooksFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/support-webhooks", NeedsCursorKey},
	{"ListInboundRequestsFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}/requests", NeedsCursorKey},
	{"InboundWebhookFunction", http.MethodPost, "/webhooks/{webhook}/messages", NeedsNone},
	{"CreateWebhookUploadFunction", http.MethodPost, "/webhooks/{webhook}/uploads", NeedsNone},
	{"ListChannelsFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/channels", NeedsCursorKey},
	{"ListChannelMessagesFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages", NeedsCursorKey},
	{"PostChannelMessageFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages", NeedsNone},
	{"CreateChannelUploadFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/channels/{channel_id}/uploads", NeedsNone},
	{"CreateRoomFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/rooms", NeedsNone},
	{"ListRoomsFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/rooms", NeedsCursorKey},
	{"CloseRoomFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/rooms/{room_id}/close", NeedsNone},
	// The workspace's glossary (translation that keeps what must not change).
	{"GetGlossaryFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/glossary", NeedsNone},
	{"PutGlossaryFunction", http.MethodPut, "/api/v1/workspaces/{workspace_id}/glossary", NeedsNone},
	// Webhook management (contract section 10). Inbound webhooks are
	// {webhook} in every path, as in their request log's.
	{"ListInboundWebhooksFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/inbound-webhooks", NeedsCursorKey},
	{"CreateInboundWebhookFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/inbound-webhooks", NeedsNone},
	{"UpdateInboundWebhookFunction", http.MethodPatch, "/api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}", NeedsNone},
	{"DeleteInboundWebhookFunction", http.MethodDelete, "/api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}", NeedsNone},
	{"RotateInboundWebhookSecretFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}/rotate-secret", NeedsNone},
	{"CreateOutboundWebhookFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/outbound-webhooks", NeedsNone},
	{"UpdateOutboundWebhookFunction", http.MethodPatch, "/api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}", NeedsNone},
	{"DeleteOutboundWebhookFunction", http.MethodDelete, "/api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}", NeedsNone},
	{"RotateOutboundWebhookSecretFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/rotate-secret", NeedsNone},
	{"CreateSupportWebhookFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/support-webhooks", NeedsNone},
	{"UpdateSupportWebhookFunction", http.MethodPatch, "/api/v1/workspaces/{workspace_id}/support-webhooks/{id}", NeedsNone},
	{"DeleteSupportWebhookFunction", http.MethodDelete, "/api/v1/workspaces/{workspace_id}/support-webhooks/{id}", NeedsNone},
	{"RotateSupportWebhookSecretFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/support-webhooks/{id}/rotate-secret", NeedsNone},
	{"ListAuditEventsFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/audit-events", NeedsCursorKey},
	{"ListOutboundDeliveriesFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/deliveries", NeedsCursorKey},
	{"ListSupportDeliveriesFunction", http.MethodGet, "/api/v1/workspaces/{workspace_id}/support-webhooks/{id}/deliveries", NeedsCursorKey},
	{"RedeliverOutboundFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/deliveries/{delivery_id}/redeliver", NeedsDeliveryQueue},
	{"RedeliverSupportFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/support-webhooks/{id}/deliveries/{delivery_id}/redeliver", NeedsDeliveryQueue},
	// Delivery for integrators (contract section 14).
	{"TestOutboundWebhookFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/test", NeedsNone},
	{"TestSupportWebhookFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/support-webhooks/{id}/test", NeedsNone},
	{"RecoverOutboundDeliveriesFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/recover", NeedsDeliveryQueue},
	{"RecoverSupportDeliveriesFunction", http.MethodPost, "/api/v1/workspaces/{workspace_id}/support-webhooks/{id}/recover", NeedsDeliveryQueue},
	// Editing and deleting messages (contract section 13).
	{"EditChannelMessageFunction", http.MethodPatch, "/api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}", NeedsNone},
	{"DeleteChannelMessageFunction", http.MethodDelete, "/api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}", NeedsNone},
	{"EditGuestMessageFunction", http.MethodPatch, "/api/v1/external/rooms/{room_id}/messages/{message_id}", NeedsNone},
	{"DeleteGuestMessageFunction", http.MethodDelete, "/api/v1/external/rooms/{room_id}/messages/{message_id}", NeedsNone},
	// Reactions (contract section 18).
	{"AddChannelReactionFunction", http.MethodPut, "/api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}/reactions/{emoji}", NeedsNone},
	{"RemoveChannelReactionFunction", http.MethodDelete, "/api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}/reactions/{emoji}", NeedsNone},
	{"AddGuestReactionFunction", http.MethodPut, "/api/v1/external/rooms/{room_id}/messages/{message_id}/reactions/{emoji}", NeedsNone},
	{"RemoveGuestReactionFunction", http.MethodDelete, "/api/v1/external/rooms/{room_id}/messages/{message_id}/reactions/{emoji}", NeedsNone},
	{"EditWebhookMessageFunction", http.MethodPatch, "/webhooks/{webhook}/messages/{message_id}", NeedsNone},
	{"DeleteWebhookMessageFunction", http.MethodDelete, "/webhooks/{webhook}/messages/{message_id}", NeedsNone},
	// The guest page and its static files (contract section 12).
	{GuestPageFunction, http.MethodGet, "/rooms/{room_id}", NeedsNone},
	{GuestPageFunction, http.MethodGet, "/assets/{file}", NeedsNone},
}

// GuestPageFunction serves the guest page (contract section 12) and its
// two static files.
const GuestPageFunction = "GuestPageFunction"

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
// JSON 405 with Allow when its path is a known route's (a GET route's path
// answers HEAD with 405, as API Gateway does).
//
// Only the routes of handlers' functions are registered at once. The rest
// of the table, which API Gateway never sends a Lambda function, is
// registered on the first request that needs it: registering every route's
// patterns cost each cold start about 0.4 ms, a quarter of what separated a
// function from a bare aws-lambda-go binary (docs/performance.md). The
// answers are the same either way (TestMuxAnswersAsTheWholeTable).
func Mux(handlers map[string]http.Handler) http.Handler {
	allow := map[string][]string{}
	for _, rt := range Routes {
		allow[rt.Path] = append(allow[rt.Path], rt.Method)
	}
	for _, methods := range allow {
		sort.Strings(methods)
	}
	var (
		once sync.Once
		rest *http.ServeMux
	)
	others := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { rest = routeMux(nil, allow, nil) })
		rest.ServeHTTP(w, r)
	})
	return Wrap(routeMux(handlers, allow, others))
}

// routeMux registers the routes of handlers' functions (with handlers nil,
// every route, none with a handler): each route's handler, HEAD's 405 on a
// GET route's path, and on each such path the 404 for another function's
// method and the 405 for any other. Every other request goes to others,
// or gets the JSON 404 when others is nil.
func routeMux(handlers map[string]http.Handler, allow map[string][]string, others http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	paths := map[string]bool{}
	for _, rt := range Routes {
		h, ok := handlers[rt.Function]
		if handlers != nil && !ok {
			continue
		}
		if ok {
			mux.Handle(rt.Method+" "+rt.Path, h)
		}
		// ServeMux lets a GET pattern answer HEAD; API Gateway's GET routes do
		// not match HEAD, so the deployed API answers 405 for it. Do the same.
		if rt.Method == http.MethodGet {
			mux.HandleFunc(http.MethodHead+" "+rt.Path, func(w http.ResponseWriter, r *http.Request) {
				methodNotAllowed(w, r, allow[rt.Path])
			})
		}
		paths[rt.Path] = true
	}
	for path := range paths {
		methods := allow[path]
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if slices.Contains(methods, r.Method) {
				// A route of another function: this process does not serve it.
				Error(w, r, chat.Errorf(chat.ENotFound, "The requested resource was not found."))
				return
			}
			methodNotAllowed(w, r, methods)
		})
	}
	if others == nil {
		others = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Error(w, r, chat.Errorf(chat.ENotFound, "The requested resource was not found."))
		})
	}
	mux.Handle("/", others)
	return mux
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

// RunPlain is the whole main of an HTTP function that needs no AWS client
// and no configuration (the guest page, the fallback): JSON logs, then
// Lambda's loop serving h on function's routes (nil: no route of its own,
// every request gets the JSON 404 or 405).
func RunPlain(function string, h http.Handler) {
	slog.SetDefault(lambdacontext.NewLogger())
	handlers := map[string]http.Handler{}
	if h != nil {
		handlers[function] = h
	}
	lambda.Start(Lambda(Mux(handlers)))
}
