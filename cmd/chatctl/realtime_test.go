package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/iampolicy"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/realtiming"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/realtime"
	"github.com/coder/websocket"
)

// Demo fixture ids (fixtures/demo.json).
const (
	demoWorkspace  = "01JD9N0V80G9T6DXN5EAY6K8H4"
	demoSupport    = "01JD9N1048PXK951NGC7NEMZX9" // Ana (admin, es-ES) and Ben (en-US)
	demoRoom       = "01JD9N113GQYDPWDARF68MKWR7" // active, on support
	demoGeneral    = "01JD9N0Z50BAKDWE0FBRMSFD5P" // all three users
	demoWebhook    = "01JD9N1418BBS5R9EJ3SKBVPMA"
	demoWebhookKey = "whsec_demo_ci_bot_secret"
)

// realtimeServer is chatctl serve's HTTP API and realtime emulation on a
// test stack seeded with the demo fixture.
type realtimeServer struct {
	*httptest.Server
	a      *app.App
	pushed chan realtime.Change
	st     *stacktest.Stack
	rt     *localRealtime
}

func startRealtimeServer(t *testing.T, opts ...func(*app.App)) *realtimeServer {
	t.Helper()
	st, _ := wiringtest.Demo(t)
	a := app.New(st.AWS, st.Table)
	a.Bucket = st.Bucket
	a.CursorKey = []byte("realtime-test-cursor-key-0123456789")
	for _, o := range opts { // before the handlers are built
		o(a)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st.AsApp(a) // each function signs as itself, as under chatctl serve
	s := &realtimeServer{a: a, pushed: make(chan realtime.Change, 1000), st: st}
	policies, err := iampolicy.Project()
	if err != nil {
		t.Fatal(err)
	}
	rt, err := startRealtime(ctx, a, policies, dynamodbstreams.NewFromConfig(st.As("RealtimePushFunction")), st.Resources, nil, func(c realtime.Change) {
		select { // a test that does not wait for pushes must not stall the stream
		case s.pushed <- c:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	handlers, err := handlers.All(a)
	if err != nil {
		t.Fatal(err)
	}
	if check := stacktest.IAM(); check != nil {
		rt.Gateway.Allowed = check.Allow // the Management API's calls join the IAM record
	}
	s.rt = rt
	s.Server = httptest.NewServer(withRealtime(httpapi.Mux(handlers), rt))
	t.Cleanup(s.Close)
	return s
}

func (s *realtimeServer) do(t *testing.T, method, path string, body any, header ...string) (int, map[string]any) {
	t.Helper()
	b, ok := body.([]byte) // raw JSON, as sent
	if !ok {
		b, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(method, s.URL+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (s *realtimeServer) join(t *testing.T, nickname, lang string) string {
	t.Helper()
	status, body := s.do(t, "POST", "/api/v1/external/rooms/"+demoRoom+"/guests", map[string]string{"nickname": nickname, "preferred_language": lang})
	data, _ := body["data"].(map[string]any)
	session, _ := data["session"].(map[string]any)
	token, _ := session["token"].(string)
	if status != 201 && status != 200 || token == "" {
		t.Fatalf("join: %d %v", status, body)
	}
	return token
}

// client is a WebSocket client of the realtime API.
type client struct {
	t  *testing.T
	ws *websocket.Conn
}

func (s *realtimeServer) dial(t *testing.T) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), frameWait)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+realtimePath, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &client{t: t, ws: ws}
}

func (c *client) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	if err := c.ws.Write(context.Background(), websocket.MessageText, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// frameWait is how long a test waits for a frame it expects: long, so that
// a loaded machine (the whole suite runs at once on two cores) makes a
// test slower, never wrong. A frame that must not come is asserted by
// ping and pong (until), not by a timeout.
const frameWait = 30 * time.Second

// next returns the next frame, or fails after frameWait.
func (c *client) next() map[string]any {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), frameWait)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		c.t.Fatalf("frame %q: %v", b, err)
	}
	return v
}

// closed asserts the server closes the connection next.
func (c *client) closed() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), frameWait)
	defer cancel()
	if _, b, err := c.ws.Read(ctx); err == nil {
		c.t.Fatalf("got %s, want the connection closed", b)
	} else if ctx.Err() != nil {
		c.t.Fatalf("the connection stayed open")
	}
}

func (c *client) subscribe(req map[string]string) map[string]any {
	c.t.Helper()
	req["action"] = "subscribe"
	c.send(req)
	return c.next()
}

// TestRealtimeThroughServe: a guest (French) and a member (English)
// subscribe; a webhook post arrives in each one's language, then the
// guest's translation lands as an update; refused subscriptions answer
// their code and close; closing the room ends the guest's connection.
func TestRealtimeThroughServe(t *testing.T) {
	s := startRealtimeServer(t)
	guestToken := s.join(t, "Élodie", "fr-FR")
	guest := s.dial(t)
	if got := guest.subscribe(map[string]string{"token": guestToken}); got["type"] != "subscribed" || got["room_id"] != demoRoom || got["channel_id"] != demoSupport || got["language"] != "fr-FR" {
		t.Fatalf("guest subscribe: %v", got)
	}
	member := s.dial(t)
	if got := member.subscribe(map[string]string{"token": "wsk_demo_ben_token", "workspace_id": demoWorkspace, "channel_id": demoSupport}); got["type"] != "subscribed" || got["language"] != "en-US" {
		t.Fatalf("member subscribe: %v", got)
	}
	member.send(map[string]string{"action": "ping"})
	if got := member.next(); got["type"] != "pong" {
		t.Fatalf("ping: %v", got)
	}

	content := "The build passed <b> \u2028 🎉 \uffff"
	posted := time.Now()
	status, body := s.do(t, "POST", "/webhooks/"+demoWebhook+"/messages", map[string]string{"content": content, "channel_id": demoSupport},
		"X-Service-Webhook-Secret", demoWebhookKey)
	if status != 202 {
		t.Fatalf("webhook post: %d %v", status, body)
	}
	accepted := time.Since(posted)
	var id string
	for _, c := range []*client{guest, member} {
		got := c.next()
		data, _ := got["data"].(map[string]any)
		if got["type"] != "message" || data["content"] != content || data["translated"] != false || data["original_content"] != content {
			t.Fatalf("push: %v, want the original while its translation is pending", got)
		}
		id, _ = data["id"].(string)
	}
	t.Logf("budget: from the 202 to both pushes %v (the post itself took %v)", time.Since(posted)-accepted, accepted)

	// The guest's translation lands: only the guest's view changes.
	if err := storetest.New(s.a.DB, s.a.Table).Translation.SaveTranslations(context.Background(), demoSupport, id, []chat.Translation{
		{MessageID: id, Language: "fr", Content: "La compilation a réussi", SourceLanguage: "en", CreatedAt: time.Now()},
	}, true); err != nil {
		t.Fatal(err)
	}
	got := guest.next()
	data, _ := got["data"].(map[string]any)
	if got["type"] != "message.updated" || data["id"] != id || data["content"] != "La compilation a réussi" || data["language"] != "fr" || data["translated"] != true || data["original_content"] != content {
		t.Fatalf("guest update: %v", got)
	}
	// The view pushed is GET .../messages' view, byte for byte.
	_, list := s.do(t, "GET", "/api/v1/external/rooms/"+demoRoom+"/messages", nil, "X-Service-Guest-Token", guestToken)
	items, _ := list["data"].([]any)
	if len(items) == 0 {
		t.Fatalf("guest list: %v", list)
	}
	listed, _ := json.Marshal(items[0])
	pushedView, _ := json.Marshal(data)
	if !bytes.Equal(listed, pushedView) {
		t.Fatalf("pushed view %s, listed %s", pushedView, listed)
	}

	// The worst content: 40,000 '<' escape to 240,000 bytes of JSON, twice
	// in a view, past API Gateway's 128 KB: each reader is told the id and
	// reads it over HTTP.
	status, body = s.do(t, "POST", "/webhooks/"+demoWebhook+"/messages", []byte(`{"content":"`+strings.Repeat("<", 40000)+`","channel_id":"`+demoSupport+`"}`),
		"X-Service-Webhook-Secret", demoWebhookKey)
	if status != 202 {
		t.Fatalf("webhook post of 40,000 '<': %d %v", status, body)
	}
	for _, c := range []*client{guest, member} {
		if got := c.next(); got["type"] != "message.too_large" || got["id"] == "" {
			t.Fatalf("oversized push: %v, want message.too_large with the id", got)
		}
	}

	// A guest of another room on another channel hears nothing of this one.
	status, body = s.do(t, "POST", "/api/v1/workspaces/"+demoWorkspace+"/rooms", map[string]string{
		"channel_id": demoGeneral, "name": "Other room", "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)},
		"Authorization", "Bearer wsk_demo_ana_token")
	otherRoom, _ := body["data"].(map[string]any)["room_id"].(string)
	if status != 201 || otherRoom == "" {
		t.Fatalf("create room: %d %v", status, body)
	}
	status, body = s.do(t, "POST", "/api/v1/external/rooms/"+otherRoom+"/guests", map[string]string{"nickname": "Otto", "preferred_language": "de"})
	if status != 201 {
		t.Fatalf("join the other room: %d %v", status, body)
	}
	otherToken := body["data"].(map[string]any)["session"].(map[string]any)["token"].(string)
	other := s.dial(t)
	if got := other.subscribe(map[string]string{"token": otherToken}); got["type"] != "subscribed" || got["room_id"] != otherRoom {
		t.Fatalf("other room's guest: %v", got)
	}
	if status, _ := s.do(t, "POST", "/webhooks/"+demoWebhook+"/messages", map[string]string{"content": "Support only", "channel_id": demoSupport},
		"X-Service-Webhook-Secret", demoWebhookKey); status != 202 {
		t.Fatalf("post: %d", status)
	}
	if got := member.next(); got["type"] != "message" {
		t.Fatalf("member: %v", got)
	}
	if got := guest.next(); got["type"] != "message" {
		t.Fatalf("guest: %v", got)
	}
	other.send(map[string]string{"action": "ping"})
	if got := other.next(); got["type"] != "pong" {
		t.Fatalf("the other room's guest got %v before its pong, want nothing of the support channel", got)
	}

	// Refusals: each answers its code, then the connection is closed.
	for _, tc := range []struct {
		name string
		req  map[string]string
		code string
	}{
		{"unknown guest token", map[string]string{"token": "gst_not_a_real_token_0000000000"}, chat.EUnauthenticated},
		{"empty token", map[string]string{"token": ""}, chat.EUnauthenticated},
		{"member of another channel", map[string]string{"token": "wsk_demo_chloe_token", "workspace_id": demoWorkspace, "channel_id": demoSupport}, chat.EForbidden},
		{"guest token used as a member's", map[string]string{"token": guestToken, "workspace_id": demoWorkspace, "channel_id": demoSupport}, chat.EUnauthenticated},
		{"token of another workspace", map[string]string{"token": "wsk_demo_ben_token", "workspace_id": "01JD9N0V80G9T6DXN5EAY6K8H5", "channel_id": demoSupport}, chat.EForbidden},
	} {
		c := s.dial(t)
		if got := c.subscribe(tc.req); got["type"] != "error" || got["code"] != tc.code {
			t.Fatalf("%s: %v, want error %s", tc.name, got, tc.code)
		}
		c.closed()
	}
	unknown := s.dial(t)
	unknown.send(map[string]string{"action": "shout"})
	if got := unknown.next(); got["code"] != "unknown_action" {
		t.Fatalf("unknown action: %v", got)
	}
	unknown.closed()

	// Closing the room ends the guest's connection; its token is refused
	// from then on. The member stays subscribed.
	if status, body := s.do(t, "POST", "/api/v1/workspaces/"+demoWorkspace+"/rooms/"+demoRoom+"/close", nil, "Authorization", "Bearer wsk_demo_ana_token"); status != 200 {
		t.Fatalf("close: %d %v", status, body)
	}
	if got := guest.next(); got["type"] != "room.closed" {
		t.Fatalf("guest after close: %v", got)
	}
	guest.closed()
	again := s.dial(t)
	if got := again.subscribe(map[string]string{"token": guestToken}); got["code"] != chat.ERoomExpired {
		t.Fatalf("subscribe to a closed room: %v", got)
	}
	again.closed()
	member.send(map[string]string{"action": "ping"})
	if got := member.next(); got["type"] != "pong" {
		t.Fatalf("member after the room closed: %v", got)
	}
}

// TestRealtimeFanoutThroughServe: with the fan-out threshold at one send,
// every push goes through the fan-out queue and RealtimeFanoutFunction, as
// chatctl serve runs them (each function signing as itself, held to its
// policy): a guest and a member each get the webhook's message, the worst
// characters for a queue body (U+FFFF, U+2028) intact.
func TestRealtimeFanoutThroughServe(t *testing.T) {
	t.Setenv(realtiming.EnvFanoutAbove, "1")
	s := startRealtimeServer(t)
	guestToken := s.join(t, "Élodie", "fr-FR")
	guest := s.dial(t)
	if got := guest.subscribe(map[string]string{"token": guestToken}); got["type"] != "subscribed" {
		t.Fatalf("guest subscribe: %v", got)
	}
	member := s.dial(t)
	if got := member.subscribe(map[string]string{"token": "wsk_demo_ben_token", "workspace_id": demoWorkspace, "channel_id": demoSupport}); got["type"] != "subscribed" {
		t.Fatalf("member subscribe: %v", got)
	}
	content := "Fanned out <b> \u2028 🎉 \uffff"
	status, body := s.do(t, "POST", "/webhooks/"+demoWebhook+"/messages", map[string]string{"content": content, "channel_id": demoSupport},
		"X-Service-Webhook-Secret", demoWebhookKey)
	if status != 202 {
		t.Fatalf("webhook post: %d %v", status, body)
	}
	for _, c := range []*client{guest, member} {
		got := c.next()
		data, _ := got["data"].(map[string]any)
		if got["type"] != "message" || data["content"] != content {
			t.Fatalf("push through the fan-out workers: %v, want the message with its content intact", got)
		}
	}
	if n := s.rt.FanoutJobs.Load(); n == 0 {
		t.Fatalf("no push job ran: the pushes did not go through the fan-out workers")
	}
}
