package app_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/guestpage"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/rooms"
)

// samples are the wiring checks of the HTTP functions, by logical id: each
// runs the function's events/ sample through the Lambda handler its main.go
// builds (handlers.FromEnv), as that function (its IAM policy applies),
// against the demo fixture. One test binary, one moto_server.
var samples = map[string]func(t *testing.T, fn string){
	// Reactions (contract section 18): the sample's 👍 on a message just
	// stored is new (201); its removal is 204 though none was added.
	"AddChannelReactionFunction":    editSample("add-channel-reaction.json", byAna, 201, requestIDEchoed),
	"RemoveChannelReactionFunction": editSample("remove-channel-reaction.json", byAna, 204, requestIDEchoed),
	"AddGuestReactionFunction":      editSample("add-guest-reaction.json", byGuest, 201, requestIDEchoed),
	"RemoveGuestReactionFunction":   editSample("remove-guest-reaction.json", byGuest, 204, requestIDEchoed),
	"CloseRoomFunction": func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		ctx := context.Background()
		h, err := handlers.FromEnv(ctx, fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "close-room.json")
		for i := 0; i < 2; i++ {
			resp, err := h(ctx, ev)
			if err != nil || resp.StatusCode != 200 || wiringtest.Body(t, resp)["data"].(map[string]any)["status"] != "closed" {
				t.Fatalf("close %d: %d %v %s, want 200 closed", i+1, resp.StatusCode, err, resp.Body)
			}
		}
		a := app.New(st.AWS, st.Table)
		_, err = (&rooms.Service{Store: storetest.New(a.DB, a.Table).Rooms, IDs: a.IDs, Now: a.Now}).Join(ctx, rooms.JoinRequest{
			RoomID: ev.PathParameters["room_id"], Nickname: "Ana", PreferredLanguage: "es-ES"})
		if !chat.IsCode(err, chat.ERoomExpired) {
			t.Fatalf("join after close: %v, want %s", err, chat.ERoomExpired)
		}
		delete(ev.Headers, "authorization")
		bad, _ := h(ctx, ev)
		if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
			t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
		}
	},
	"CreateRoomFunction": func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		ctx := context.Background()
		h, err := handlers.FromEnv(ctx, fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "create-room.json")
		// The sample's expires_at is a placeholder: a room lives at most 7 days.
		ev.Body = strings.Replace(ev.Body, "2099-01-01T00:00:00Z", chat.FormatTime(time.Now().Add(time.Hour)), 1)
		resp, err := h(ctx, ev)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("sample: %d %v %s, want 201", resp.StatusCode, err, resp.Body)
		}
		data := wiringtest.Body(t, resp)["data"].(map[string]any)
		id, _ := data["room_id"].(string)
		if data["status"] != "active" || data["join_path"] != "/api/v1/external/rooms/"+id+"/guests" {
			t.Fatalf("room %v, want an active room with its join path", data)
		}
		wiringtest.Join(t, st, id, "fr-FR")
		delete(ev.Headers, "authorization")
		bad, _ := h(ctx, ev)
		if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
			t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
		}
	},
	"FallbackFunction": func(t *testing.T, fn string) {
		fallback := httpfn.Lambda(nil)
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "fallback.json")
		resp, err := fallback(context.Background(), ev)
		if err != nil || resp.StatusCode != 404 || resp.Body != `{"message":"The requested resource was not found.","errors":{"code":["not_found"]}}` {
			t.Fatalf("sample: %d %v %s, want the JSON 404", resp.StatusCode, err, resp.Body)
		}
		ev.RawPath = "/webhooks/01JD9N1418BBS5R9EJ3SKBVPMA/messages"
		ev.RequestContext.HTTP.Method = "GET"
		resp, _ = fallback(context.Background(), ev)
		if resp.StatusCode != 405 || resp.Headers["Allow"] != "POST" {
			t.Fatalf("GET on a POST route: %d %v, want 405 with Allow: POST", resp.StatusCode, resp.Headers)
		}
	},
	// TestSampleEvent: the sample (a room id that is not one) is a JSON 404;
	// a room's page is HTML carrying the room id and the realtime URL, under a
	// strict Content-Security-Policy that allows that URL's origin; its
	// script is served, an unknown file is not.
	"GuestPageFunction": func(t *testing.T, fn string) {
		wiringtest.DemoAs(t, fn)
		t.Setenv(guestpage.EnvRealtimeURL, "wss://abc123.execute-api.us-east-1.amazonaws.com/live")
		h, err := handlers.FromEnv(context.Background(), fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "guest-page.json")
		resp, err := h(context.Background(), ev)
		if err != nil || resp.StatusCode != 404 || !strings.Contains(resp.Body, `"not_found"`) {
			t.Fatalf("sample: %d %v %s, want a JSON 404", resp.StatusCode, err, resp.Body)
		}
		const room = "01JD9N113GQYDPWDARF68MKWR7"
		ev.RawPath, ev.RequestContext.HTTP.Path, ev.PathParameters = "/rooms/"+room, "/rooms/"+room, map[string]string{"room_id": room}
		resp, err = h(context.Background(), ev)
		csp := resp.Headers["Content-Security-Policy"]
		if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Headers["Content-Type"], "text/html") ||
			!strings.Contains(resp.Body, `data-room-id="`+room+`"`) || !strings.Contains(resp.Body, `data-realtime-url="wss://abc123.execute-api.us-east-1.amazonaws.com/live"`) {
			t.Fatalf("page: %d %v %v %.300s", resp.StatusCode, err, resp.Headers, resp.Body)
		}
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "connect-src 'self' ", " wss://abc123.execute-api.us-east-1.amazonaws.com;"} {
			if !strings.Contains(csp, want) {
				t.Fatalf("CSP %q lacks %q", csp, want)
			}
		}
		for path, want := range map[string]int{"/assets/guest.js": 200, "/assets/guest.css": 200, "/assets/..%2Fembed.go": 404, "/assets/guest.html": 404} {
			ev.RawPath, ev.RequestContext.HTTP.Path, ev.RouteKey = path, path, "GET /assets/{file}"
			ev.PathParameters = map[string]string{"file": strings.TrimPrefix(path, "/assets/")}
			resp, _ := h(context.Background(), ev)
			if resp.StatusCode != want {
				t.Fatalf("%s: %d, want %d", path, resp.StatusCode, want)
			}
		}
	},
	"InboundWebhookFunction": func(t *testing.T, fn string) {
		wiringtest.DemoAs(t, fn)
		h, err := handlers.FromEnv(context.Background(), fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "inbound-webhook.json")
		resp, err := h(context.Background(), ev)
		if err != nil || resp.StatusCode != 202 {
			t.Fatalf("sample: %d %v %s, want 202", resp.StatusCode, err, resp.Body)
		}
		// net/http canonicalises the name; HTTP header names are case-insensitive.
		if got := resp.Headers[http.CanonicalHeaderKey("X-RateLimit-Limit")]; got != "600" {
			t.Fatalf("X-RateLimit-Limit %q, want the fixture's 600 (headers %v)", got, resp.Headers)
		}
		replay, _ := h(context.Background(), ev)
		if replay.StatusCode != 202 || replay.Body != resp.Body || replay.Headers["Idempotent-Replayed"] != "true" {
			t.Fatalf("replay: %d %v %s", replay.StatusCode, replay.Headers, replay.Body)
		}
		ev.Headers["x-service-webhook-secret"] = "wrong"
		bad, _ := h(context.Background(), ev)
		if bad.StatusCode != 401 {
			t.Fatalf("wrong secret: %d %s, want 401", bad.StatusCode, bad.Body)
		}
	},
	"JoinRoomFunction": func(t *testing.T, fn string) {
		wiringtest.DemoAs(t, fn)
		h, err := handlers.FromEnv(context.Background(), fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "join-room.json")
		resp, err := h(context.Background(), ev)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("sample: %d %v %s, want 201", resp.StatusCode, err, resp.Body)
		}
		data := wiringtest.Body(t, resp)["data"].(map[string]any)
		if data["room"].(map[string]any)["room_id"] != ev.PathParameters["room_id"] {
			t.Fatalf("joined room %v, want the event's", data["room"])
		}
		if resp.Headers["X-Request-Id"] != ev.RequestContext.RequestID {
			t.Fatalf("X-Request-Id %q, want API Gateway's request id %q", resp.Headers["X-Request-Id"], ev.RequestContext.RequestID)
		}
		again, _ := h(context.Background(), ev)
		if again.StatusCode != 200 {
			t.Fatalf("re-join with the same client_id: %d, want 200", again.StatusCode)
		}
		ev.Body = `{"nickname":""}`
		bad, _ := h(context.Background(), ev)
		if bad.StatusCode != 422 {
			t.Fatalf("bad request: %d %s, want 422", bad.StatusCode, bad.Body)
		}
	},
	"ListChannelMessagesFunction": func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		ctx := context.Background()
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-channel-messages.json")
		// A guest of the channel's room posts; the member reads it.
		a, joined := wiringtest.Join(t, st, "01JD9N113GQYDPWDARF68MKWR7", "es-ES")
		if _, err := (&rooms.Poster{Store: storetest.New(a.DB, a.Table), IDs: a.IDs, Now: time.Now}).Post(ctx, chat.GuestSession{Guest: joined.Guest}, joined.Room, "Hola", nil); err != nil {
			t.Fatalf("post: %v", err)
		}
		h, err := handlers.FromEnv(ctx, fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		resp, err := h(ctx, ev)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
		}
		data := wiringtest.Body(t, resp)["data"].([]any)
		if len(data) != 1 || data[0].(map[string]any)["content"] != "Hola" || data[0].(map[string]any)["author"].(map[string]any)["type"] != "guest" {
			t.Fatalf("body %s, want the guest's one message", resp.Body)
		}
		delete(ev.Headers, "authorization")
		bad, _ := h(ctx, ev)
		if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
			t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
		}
	},
	"ListChannelsFunction": func(t *testing.T, fn string) {
		_, doc := wiringtest.DemoAs(t, fn)
		ctx := context.Background()
		h, err := handlers.FromEnv(ctx, fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-channels.json")
		resp, err := h(ctx, ev)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
		}
		body := wiringtest.Body(t, resp)
		data := body["data"].([]any)
		if len(data) != 1 || data[0].(map[string]any)["id"] != doc.Workspaces[0].Channels[0].ID || body["meta"].(map[string]any)["next_cursor"] == nil {
			t.Fatalf("body %s, want Ana's first channel and a cursor to her second", resp.Body)
		}
		delete(ev.Headers, "authorization")
		bad, _ := h(ctx, ev)
		if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
			t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
		}
	},
	"ListGuestMessagesFunction": func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		ctx := context.Background()
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-guest-messages.json")
		// The sample's token is a placeholder: a real one comes from a join.
		a, joined := wiringtest.Join(t, st, ev.PathParameters["room_id"], "es-ES")
		if _, err := (&rooms.Poster{Store: storetest.New(a.DB, a.Table), IDs: a.IDs, Now: time.Now}).Post(ctx, chat.GuestSession{Guest: joined.Guest}, joined.Room, "Hola", nil); err != nil {
			t.Fatalf("post: %v", err)
		}
		h, err := handlers.FromEnv(ctx, fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev.Headers["x-service-guest-token"] = joined.Token
		resp, err := h(ctx, ev)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
		}
		body := wiringtest.Body(t, resp)
		data := body["data"].([]any)
		if len(data) != 1 || data[0].(map[string]any)["content"] != "Hola" || body["meta"].(map[string]any)["limit"] != float64(20) {
			t.Fatalf("body %s, want the one message with limit 20", resp.Body)
		}
		if resp.Headers["X-Request-Id"] != ev.RequestContext.RequestID {
			t.Fatalf("X-Request-Id %q, want API Gateway's request id %q", resp.Headers["X-Request-Id"], ev.RequestContext.RequestID)
		}
		delete(ev.Headers, "x-service-guest-token")
		bad, _ := h(ctx, ev)
		if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
			t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
		}
	},
	"ListInboundRequestsFunction": func(t *testing.T, fn string) {
		wiringtest.DemoAs(t, fn)
		h, err := handlers.FromEnv(context.Background(), fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-inbound-requests.json")
		resp, err := h(context.Background(), ev)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
		}
		if data := wiringtest.Body(t, resp)["data"].([]any); len(data) != 0 {
			t.Fatalf("a fresh stack has request log records: %v", data)
		}
		ev.Headers["authorization"] = "Bearer wsk_unknown"
		bad, _ := h(context.Background(), ev)
		if bad.StatusCode != 401 {
			t.Fatalf("unknown token: %d, want 401", bad.StatusCode)
		}
	},
	"ListOutboundWebhooksFunction": func(t *testing.T, fn string) {
		_, doc := wiringtest.DemoAs(t, fn)
		h, err := handlers.FromEnv(context.Background(), fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-outbound-webhooks.json")
		resp, err := h(context.Background(), ev)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
		}
		body := wiringtest.Body(t, resp)
		data := body["data"].([]any)
		if len(data) != 2 || data[0].(map[string]any)["id"] != doc.Workspaces[0].OutboundWebhooks[0].ID {
			t.Fatalf("first page %v, want the fixture's first two outbound webhooks", data)
		}
		if body["meta"].(map[string]any)["next_cursor"] == nil {
			t.Fatalf("no next_cursor though the fixture has more")
		}
		delete(ev.Headers, "authorization")
		bad, _ := h(context.Background(), ev)
		if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
			t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
		}
	},
	"ListRoomsFunction": func(t *testing.T, fn string) {
		wiringtest.DemoAs(t, fn)
		ctx := context.Background()
		h, err := handlers.FromEnv(ctx, fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-rooms.json")
		resp, err := h(ctx, ev)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
		}
		body := wiringtest.Body(t, resp)
		if len(body["data"].([]any)) != 2 || body["meta"].(map[string]any)["next_cursor"] == nil {
			t.Fatalf("body %s, want two of the demo's three rooms and a cursor", resp.Body)
		}
		delete(ev.Headers, "authorization")
		bad, _ := h(ctx, ev)
		if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
			t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
		}
	},
	"ListSupportWebhooksFunction": func(t *testing.T, fn string) {
		_, doc := wiringtest.DemoAs(t, fn)
		h, err := handlers.FromEnv(context.Background(), fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-support-webhooks.json")
		resp, err := h(context.Background(), ev)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
		}
		if n := len(wiringtest.Body(t, resp)["data"].([]any)); n != len(doc.Workspaces[0].SupportWebhooks) {
			t.Fatalf("%d support webhooks, want the fixture's %d", n, len(doc.Workspaces[0].SupportWebhooks))
		}
		ev.RawQueryString = "limit=0"
		bad, _ := h(context.Background(), ev)
		if bad.StatusCode != 422 {
			t.Fatalf("limit=0: %d %s, want 422", bad.StatusCode, bad.Body)
		}
	},
	"PostChannelMessageFunction": func(t *testing.T, fn string) {
		wiringtest.DemoAs(t, fn)
		ctx := context.Background()
		h, err := handlers.FromEnv(ctx, fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "post-channel-message.json")
		ev.Headers["idempotency-key"] = "wiring-1"
		resp, err := h(ctx, ev)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("sample: %d %v %s, want 201", resp.StatusCode, err, resp.Body)
		}
		data := wiringtest.Body(t, resp)["data"].(map[string]any)
		author := data["author"].(map[string]any)
		if author["type"] != "user" || author["name"] != "Ana" || author["id"] != "01JD9N0W78H8Z7XT23BWPJKAFM" || author["avatar_url"] != nil {
			t.Fatalf("author %v, want the user Ana without avatar", author)
		}
		again, _ := h(ctx, ev)
		if again.StatusCode != 201 || again.Body != resp.Body || again.Headers["Idempotent-Replayed"] != "true" {
			t.Fatalf("retry: %d %v %s, want the same 201 replayed", again.StatusCode, again.Headers, again.Body)
		}
		delete(ev.Headers, "authorization")
		bad, _ := h(ctx, ev)
		if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
			t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
		}
	},
	"CreateChannelUploadFunction": func(t *testing.T, fn string) {
		wiringtest.DemoAs(t, fn)
		uploadSample(t, fn, "create-channel-upload.json", nil)
	},
	"CreateGuestUploadFunction": func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "create-guest-upload.json")
		_, joined := wiringtest.Join(t, st, ev.PathParameters["room_id"], "es-ES")
		uploadSample(t, fn, "create-guest-upload.json", map[string]string{"x-service-guest-token": joined.Token})
	},
	"CreateWebhookUploadFunction": func(t *testing.T, fn string) {
		wiringtest.DemoAs(t, fn)
		resp := uploadSample(t, fn, "create-webhook-upload.json", nil)
		if resp.Headers["X-Ratelimit-Limit"] == "" && resp.Headers["X-RateLimit-Limit"] == "" {
			t.Fatalf("webhook upload without its quota headers: %v", resp.Headers)
		}
	},
	"PostGuestMessageFunction": func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		ctx := context.Background()
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "post-guest-message.json")
		// The sample's token is a placeholder: a real one comes from a join.
		_, joined := wiringtest.Join(t, st, ev.PathParameters["room_id"], "es-ES")
		h, err := handlers.FromEnv(ctx, fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		ev.Headers["x-service-guest-token"] = joined.Token
		resp, err := h(ctx, ev)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("sample: %d %v %s, want 201", resp.StatusCode, err, resp.Body)
		}
		data := wiringtest.Body(t, resp)["data"].(map[string]any)
		if !chat.ValidID(data["id"].(string)) || data["content"] != "Hola, ¿alguien puede ayudarme con mi pedido?" ||
			data["original_language"] != "es-ES" || data["author"].(map[string]any)["id"] != joined.Guest.ID {
			t.Fatalf("body %s, want the posted message by the joined guest in es-ES", resp.Body)
		}
		if resp.Headers["X-Request-Id"] != ev.RequestContext.RequestID {
			t.Fatalf("X-Request-Id %q, want API Gateway's request id %q", resp.Headers["X-Request-Id"], ev.RequestContext.RequestID)
		}
		ev.Body = `{"content":"   "}`
		bad, _ := h(ctx, ev)
		if bad.StatusCode != 422 {
			t.Fatalf("blank post: %d %s, want 422", bad.StatusCode, bad.Body)
		}
	},
}

// TestFunctionSamples runs samples.
func TestFunctionSamples(t *testing.T) {
	for fn, check := range samples {
		t.Run(fn, func(t *testing.T) { check(t, fn) })
	}
}

// TestEveryEventFunctionHasASample: each function of template.yaml that
// serves no HTTP route (the queue, stream, schedule and WebSocket ones) has
// its wiring check in samples, so a new one cannot go without.
func TestEveryEventFunctionHasASample(t *testing.T) {
	tmpl, err := samtemplate.Parse(chatbundle.Template)
	if err != nil {
		t.Fatal(err)
	}
	http := map[string]bool{httpapi.FallbackFunction: true}
	for _, rt := range httpapi.Routes {
		http[rt.Function] = true
	}
	n := 0
	for _, fn := range tmpl.Functions() {
		if http[fn] {
			continue
		}
		n++
		if samples[fn] == nil {
			t.Errorf("%s: no wiring check in samples", fn)
		}
	}
	if n < 6 {
		t.Fatalf("template.yaml has %d functions without an HTTP route, want the six event functions at least", n)
	}
}

// uploadSample runs fn's upload sample (with extra headers): 201 with a
// presigned POST to the stack's bucket; a body naming an SVG is 422.
func uploadSample(t *testing.T, fn, sample string, headers map[string]string) events.APIGatewayV2HTTPResponse {
	t.Helper()
	ctx := context.Background()
	h, err := handlers.FromEnv(ctx, fn)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, sample)
	for k, v := range headers {
		ev.Headers[k] = v
	}
	resp, err := h(ctx, ev)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("sample: %d %v %s, want 201", resp.StatusCode, err, resp.Body)
	}
	data := wiringtest.Body(t, resp)["data"].(map[string]any)
	fields, _ := data["fields"].(map[string]any)
	if !chat.ValidID(data["upload_id"].(string)) || data["method"] != "POST" || !strings.Contains(data["url"].(string), os.Getenv(awsenv.EnvBucket)) ||
		fields["policy"] == nil || fields["key"] == nil {
		t.Fatalf("upload form %s", resp.Body)
	}
	ev.Body = `{"filename":"logo.svg","content_type":"image/svg+xml","size":10}`
	bad, _ := h(ctx, ev)
	if bad.StatusCode != 422 {
		t.Fatalf("an SVG: %d %s, want 422", bad.StatusCode, bad.Body)
	}
	return resp
}
