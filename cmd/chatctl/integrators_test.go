package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/apyserver"
	"github.com/chatbridge/chat/internal/motoserver"
	"github.com/chatbridge/chat/internal/openapitest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/signature"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// servedStack is chatctl serve run in this process on a free port and a
// table of its own, with one workspace whose admin holds adminToken.
type servedStack struct {
	base, ws, channel, adminToken string
}

// serveForTest runs runServe (stopped when the test ends) with every
// variable it sets saved and restored by t.Setenv, and applies a workspace
// with an admin and a channel. Translation is off unless translator names
// one ("" lets serve choose: Apertium when it is installed).
func serveForTest(t *testing.T, schedule string, translator ...string) servedStack {
	t.Helper()
	tr := translating.TranslatorNone
	if len(translator) > 0 {
		tr = translator[0]
	}
	port, err := motoserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for k, v := range map[string]string{
		"ADDR": addr, awsenv.EnvTable: fmt.Sprintf("integrators-%d", time.Now().UnixNano()),
		translating.EnvTranslator: tr, translating.EnvApertiumURL: "",
		app.EnvOutboundAllowCIDRS: "127.0.0.0/8", delivering.EnvOutboundAllowOnly: "true",
		delivering.EnvDeliverySchedule: schedule, awsenv.EnvQueueURL: "", awsenv.EnvDeliveryQueueURL: "",
		awsenv.EnvCursorKey: localCursorKey,
		// Settings read fresh on every attempt: what this test checks is
		// the signing, not how a cached rotation is noticed.
		app.EnvWebhookCacheTTL: "0s",
	} {
		t.Setenv(k, v)
	}
	logger := slog.Default()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, nil, io.Discard, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("chatctl serve did not stop within 10 s")
		}
		slog.SetDefault(logger)
	})
	base := "http://" + addr
	for deadline := time.Now().Add(60 * time.Second); ; {
		resp, err := http.Get(base + "/openapi.yaml")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case err := <-done:
			t.Fatalf("chatctl serve exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("chatctl serve not answering after 60 s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	s := servedStack{base: base, ws: "01JDA5Q4V3B8ZZZZZZZZZZZW01", channel: "01JDA5Q4V3B8ZZZZZZZZZZZC01", adminToken: "wsk_integrators_admin_token_0123456789abcdef"}
	doc := fmt.Sprintf(`{"workspaces":[{"id":%q,"name":"Integrators","default_language":"en",
		"users":[{"id":"01JDA5Q4V3B8ZZZZZZZZZZZM01","name":"Ada","preferred_language":"en","api_token":%q,"role":"admin"}],
		"channels":[{"id":%q,"name":"general","members":["01JDA5Q4V3B8ZZZZZZZZZZZM01"]}]}]}`, s.ws, s.adminToken, s.channel)
	if err := runApply(context.Background(), []string{"-"}, strings.NewReader(doc), io.Discard, io.Discard); err != nil {
		t.Fatalf("apply: %v", err)
	}
	return s
}

// call sends an admin request to the served API and decodes its body.
func (s servedStack) call(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, s.base+"/api/v1/workspaces/"+s.ws+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.adminToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	openapitest.Check(t, req, resp.StatusCode, resp.Header, raw)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func dataOf(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	d, ok := m["data"].(map[string]any)
	if !ok {
		t.Fatalf("got body %v, want a data object", m)
	}
	return d
}

// received is one request a local receiver got.
type received struct {
	header http.Header
	body   []byte
}

// receiver is a local endpoint that records what it receives and answers
// with status().
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	status func() int
	arrive chan struct{}
}

func newReceiver(t *testing.T, status func() int) *receiver {
	t.Helper()
	r := &receiver{status: status, arrive: make(chan struct{}, 1000)}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{req.Header.Clone(), b})
		r.mu.Unlock()
		w.WriteHeader(r.status())
		r.arrive <- struct{}{}
	}))
	r.Listener, _ = net.Listen("tcp", "127.0.0.1:0")
	r.Start()
	t.Cleanup(r.Close)
	return r
}

// wait returns the first delivery of type typ, waiting up to 60 s.
func (r *receiver) wait(t *testing.T, typ string) received {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		r.mu.Lock()
		for _, g := range r.got {
			if g.header.Get("X-Service-Event") == typ {
				r.mu.Unlock()
				return g
			}
		}
		r.mu.Unlock()
		select {
		case <-r.arrive:
		case <-deadline:
			t.Fatalf("no %s delivery within 60 s", typ)
		}
	}
}

// TestServeDeliveriesVerifyWithTheStandardWebhooksLibrary: an outbound
// webhook created through chatctl serve's API receives room.created; the
// official Standard Webhooks library verifies it with the create
// response's signing_secret_standard; after a rotation the next delivery
// verifies with the new and with the previous secret (two signatures), and
// chatctl listen's verifier accepts both schemes.
func TestServeDeliveriesVerifyWithTheStandardWebhooksLibrary(t *testing.T) {
	s := serveForTest(t, "1s")
	rcv := newReceiver(t, func() int { return http.StatusNoContent })
	status, created := s.call(t, "POST", "/outbound-webhooks", `{"name":"std","url":"`+rcv.URL+`/hook","events":["room.created","room.closed"]}`)
	if status != 201 {
		t.Fatalf("create webhook: got %d %v, want 201", status, created)
	}
	wh := dataOf(t, created)
	first, _ := wh["signing_secret_standard"].(string)
	if want := signature.StandardSecret([]byte(wh["signing_secret"].(string))); first != want {
		t.Fatalf("got signing_secret_standard %q, want %q", first, want)
	}
	verify := func(secret string, d received) error {
		lib, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatalf("NewWebhook: %v", err)
		}
		return lib.Verify(d.body, d.header)
	}
	in := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if status, body := s.call(t, "POST", "/rooms", `{"channel_id":"`+s.channel+`","name":"Call","expires_at":"`+in+`"}`); status != 201 {
		t.Fatalf("create room: got %d %v, want 201", status, body)
	}
	d := rcv.wait(t, "room.created")
	if err := verify(first, d); err != nil {
		t.Fatalf("the Standard Webhooks library refused room.created: %v", err)
	}
	if got, want := d.header.Get("webhook-id"), d.header.Get("X-Service-Delivery"); got != want {
		t.Errorf("got webhook-id %q, want the delivery id %q", got, want)
	}
	if !strings.HasPrefix(d.header.Get(signature.Header), "t="+d.header.Get("webhook-timestamp")+",") {
		t.Errorf("got webhook-timestamp %q and %s %q, want the same time", d.header.Get("webhook-timestamp"), signature.Header, d.header.Get(signature.Header))
	}
	status, rotated := s.call(t, "POST", "/outbound-webhooks/"+wh["id"].(string)+"/rotate-secret", "")
	if status != 200 {
		t.Fatalf("rotate: got %d %v, want 200", status, rotated)
	}
	second, _ := dataOf(t, rotated)["signing_secret_standard"].(string)
	if second == "" || second == first {
		t.Fatalf("got rotated signing_secret_standard %q, want a new one", second)
	}
	room := ""
	if status, body := s.call(t, "POST", "/rooms", `{"channel_id":"`+s.channel+`","name":"Call 2","expires_at":"`+in+`"}`); status != 201 {
		t.Fatalf("create room: got %d %v, want 201", status, body)
	} else {
		room = dataOf(t, body)["room_id"].(string)
	}
	if status, body := s.call(t, "POST", "/rooms/"+room+"/close", ""); status != 200 {
		t.Fatalf("close room: got %d %v, want 200", status, body)
	}
	d = rcv.wait(t, "room.closed")
	if n := len(strings.Fields(d.header.Get("webhook-signature"))); n != 2 {
		t.Errorf("got %d webhook-signature entries after a rotation, want 2", n)
	}
	for _, sec := range []string{first, second} {
		if err := verify(sec, d); err != nil {
			t.Errorf("the library refused room.closed with secret %d: %v", map[string]int{first: 1, second: 2}[sec], err)
		}
	}
	if err := verify(signature.StandardSecret([]byte("whsig_not_this_one")), d); err == nil {
		t.Error("the library verified with a wrong secret, want a refusal")
	}
	// chatctl listen accepts either scheme: the Standard one alone, too.
	key, _ := signature.ParseStandardSecret(second)
	std := d.header.Clone()
	std.Del(signature.Header)
	if err := verifyEitherScheme(std, [][]byte{key}, d.body, time.Now()); err != nil {
		t.Errorf("listen refused the Standard Webhooks headers alone: %v", err)
	}
	if err := verifyEitherScheme(d.header, [][]byte{key}, d.body, time.Now()); err != nil {
		t.Errorf("listen refused the delivery: %v", err)
	}
	if err := verifyEitherScheme(std, [][]byte{key}, bytes.ToUpper(d.body), time.Now()); err == nil {
		t.Error("listen accepted another body, want a refusal")
	}
}

// deliveries returns a webhook's delivery log (first page).
func (s servedStack) deliveries(t *testing.T, kind, id string) []map[string]any {
	t.Helper()
	status, body := s.call(t, "GET", "/"+kind+"-webhooks/"+id+"/deliveries?limit=100", "")
	if status != 200 {
		t.Fatalf("delivery log: got %d %v, want 200", status, body)
	}
	var out []map[string]any
	for _, d := range body["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

// count returns how many deliveries of type typ the receiver got.
func (r *receiver) count(typ string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, g := range r.got {
		if g.header.Get("X-Service-Event") == typ {
			n++
		}
	}
	return n
}

// TestServeWebhooksTestAndRecover runs `chatctl webhooks test` and
// `chatctl webhooks recover` against chatctl serve: a receiver that answers
// 500 fails a room.created delivery to the end of its schedule; a test
// reports the 500; once it answers again a test succeeds (and verifies
// with the Standard Webhooks library), and one recovery queues the failed
// delivery, which arrives once more with the same delivery id and ends
// succeeded; a second recovery queues nothing.
func TestServeWebhooksTestAndRecover(t *testing.T) {
	s := serveForTest(t, "1s")
	var answer atomic.Int32
	answer.Store(http.StatusInternalServerError)
	rcv := newReceiver(t, func() int { return int(answer.Load()) })
	status, created := s.call(t, "POST", "/outbound-webhooks", `{"name":"flaky","url":"`+rcv.URL+`/hook","events":["room.created"],"rate_limit":100}`)
	if status != 201 {
		t.Fatalf("create webhook: got %d %v, want 201", status, created)
	}
	wh := dataOf(t, created)
	id, std := wh["id"].(string), wh["signing_secret_standard"].(string)
	if wh["rate_limit"] != float64(100) {
		t.Fatalf("got rate_limit %v, want 100 (limited: every attempt below counts in the webhook's second)", wh["rate_limit"])
	}
	in := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if status, body := s.call(t, "POST", "/rooms", `{"channel_id":"`+s.channel+`","name":"Outage","expires_at":"`+in+`"}`); status != 201 {
		t.Fatalf("create room: got %d %v, want 201", status, body)
	}
	var failed map[string]any
	for deadline := time.Now().Add(60 * time.Second); failed == nil; time.Sleep(200 * time.Millisecond) {
		for _, d := range s.deliveries(t, "outbound", id) {
			if d["event_type"] == "room.created" && d["status"] == "failed" {
				failed = d
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("room.created not failed within 60 s: %v", s.deliveries(t, "outbound", id))
		}
	}
	if failed["attempts"] != float64(2) {
		t.Fatalf("got %v attempts of the failed delivery, want 2 (schedule 1s)", failed["attempts"])
	}
	webhooks := func(args ...string) map[string]any {
		t.Helper()
		var out, errs bytes.Buffer
		all := append([]string{args[0], "--api", s.base, "--workspace", s.ws, "--token", s.adminToken}, args[1:]...)
		if err := runWebhooks(context.Background(), append(all, id), &out, &errs); err != nil {
			t.Fatalf("chatctl webhooks %v: %v (%s)", args, err, errs.String())
		}
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("chatctl webhooks %v printed %q: %v", args, out.String(), err)
		}
		return dataOf(t, v)
	}
	if got := webhooks("test"); got["status"] != "failed" || got["response_status"] != float64(500) || got["error"] != "http_500" {
		t.Fatalf("test against a failing receiver: got %v, want failed with 500", got)
	}
	answer.Store(http.StatusNoContent)
	got := webhooks("test")
	if got["status"] != "succeeded" || got["response_status"] != float64(204) || got["error"] != nil {
		t.Fatalf("test: got %v, want succeeded with 204", got)
	}
	d := rcv.wait(t, "webhook.test")
	lib, _ := standardwebhooks.NewWebhook(std)
	if err := lib.Verify(d.body, d.header); err != nil {
		t.Errorf("the Standard Webhooks library refused webhook.test: %v", err)
	}
	var env struct {
		Type string `json:"type"`
		Data struct {
			WebhookID string `json:"webhook_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(d.body, &env); err != nil || env.Type != "webhook.test" || env.Data.WebhookID != id {
		t.Errorf("got webhook.test envelope %s, want data.webhook_id %s", d.body, id)
	}
	if rcv.count("webhook.test") != 2 {
		t.Errorf("got %d webhook.test deliveries, want 2 (one per test, none retried)", rcv.count("webhook.test"))
	}
	before := rcv.count("room.created")
	if got := webhooks("recover", "--since", "1h"); got["queued"] != float64(1) {
		t.Fatalf("recover: got %v, want 1 queued", got)
	}
	if got := webhooks("recover", "--since", "1h"); got["queued"] != float64(0) {
		t.Fatalf("recover again: got %v, want none queued twice", got)
	}
	for deadline := time.Now().Add(60 * time.Second); rcv.count("room.created") == before; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the recovered delivery did not arrive within 60 s")
		}
	}
	var again received
	rcv.mu.Lock()
	for _, g := range rcv.got {
		if g.header.Get("X-Service-Event") == "room.created" {
			again = g
		}
	}
	rcv.mu.Unlock()
	if again.header.Get("X-Service-Delivery") != failed["id"] || again.header.Get("X-Service-Attempt") != "3" {
		t.Errorf("got the recovered delivery %s attempt %s, want %s attempt 3", again.header.Get("X-Service-Delivery"),
			again.header.Get("X-Service-Attempt"), failed["id"])
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var rec map[string]any
		for _, d := range s.deliveries(t, "outbound", id) {
			if d["id"] == failed["id"] {
				rec = d
			}
		}
		if rec["status"] == "succeeded" && rec["attempts"] == float64(3) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got the recovered delivery's record %v, want succeeded after 3 attempts", rec)
		}
	}
	time.Sleep(2 * time.Second) // a duplicate would have arrived by now
	if n := rcv.count("room.created"); n != before+1 {
		t.Errorf("got %d room.created deliveries after the recovery, want exactly one more than %d", n, before)
	}
	var out, errs bytes.Buffer
	err := runWebhooks(context.Background(), []string{"recover", "--api", s.base, "--workspace", s.ws, "--token", s.adminToken, "--since", "2000-01-01T00:00:00Z", id}, &out, &errs)
	if err == nil || !strings.Contains(err.Error(), "422") || !strings.Contains(err.Error(), "30 days") {
		t.Errorf("recover from 2000: got %v, want a 422 naming the 30 days", err)
	}
}

// TestServeDeliveriesMatchTheEventCatalog sends, through chatctl serve,
// an event of every type to an outbound webhook subscribed to all of them
// and a support webhook (a guest's post, edit and deletion among them), and validates every delivery received (headers
// and body) against openapi.yaml's webhooks section.
func TestServeDeliveriesMatchTheEventCatalog(t *testing.T) {
	// With Apertium, the guest's Spanish is translated for the admin, and
	// message.translated is sent too.
	translated := apyserver.Missing(apyserver.DefaultModesDir, "spa-eng", "eng-spa") == nil
	if !translated {
		t.Log("LOUD: Apertium (apertium-apy, apertium-eng-spa) is not installed: message.translated is not sent, so this run validates every other type only")
	}
	s := serveForTest(t, "1s", "")
	rcv := newReceiver(t, func() int { return http.StatusNoContent })
	all := `["message.created","message.translated","room.created","room.guest_joined","room.closed","webhook.disabled","message.updated","message.deleted"]`
	status, out := s.call(t, "POST", "/outbound-webhooks", `{"name":"all","url":"`+rcv.URL+`/all","events":`+all+`}`)
	if status != 201 {
		t.Fatalf("create outbound webhook: got %d %v, want 201", status, out)
	}
	outID := dataOf(t, out)["id"].(string)
	if status, body := s.call(t, "POST", "/support-webhooks", `{"name":"desk","url":"`+rcv.URL+`/desk"}`); status != 201 {
		t.Fatalf("create support webhook: got %d %v, want 201", status, body)
	}
	// A receiver that is gone: its first delivery disables its webhook,
	// which the other outbound webhook hears of as webhook.disabled.
	gone := newReceiver(t, func() int { return http.StatusGone })
	status, goneHook := s.call(t, "POST", "/outbound-webhooks", `{"name":"gone","url":"`+gone.URL+`/gone","events":["room.created"]}`)
	if status != 201 {
		t.Fatalf("create outbound webhook: got %d %v, want 201", status, goneHook)
	}
	goneID := dataOf(t, goneHook)["id"].(string)
	in := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	status, room := s.call(t, "POST", "/rooms", `{"channel_id":"`+s.channel+`","name":"Catalog","expires_at":"`+in+`"}`)
	if status != 201 {
		t.Fatalf("create room: got %d %v, want 201", status, room)
	}
	roomID := dataOf(t, room)["room_id"].(string)
	send := func(method, path, token, header, body string, want int) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set(header, token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: got %d %v, want %d", method, path, resp.StatusCode, v, want)
		}
		return v
	}
	post := func(path, token, header, body string, want int) map[string]any {
		t.Helper()
		return send("POST", path, token, header, body, want)
	}
	joined := post("/api/v1/external/rooms/"+roomID+"/guests", "", "", `{"nickname":"Marta","preferred_language":"es"}`, 201)
	guestToken := dataOf(t, joined)["session"].(map[string]any)["token"].(string)
	posted := post("/api/v1/external/rooms/"+roomID+"/messages", guestToken, "X-Service-Guest-Token", `{"content":"Hola, ¿me ayudan?"}`, 201)
	msgPath := "/api/v1/external/rooms/" + roomID + "/messages/" + dataOf(t, posted)["id"].(string)
	send("PATCH", msgPath, guestToken, "X-Service-Guest-Token", `{"content":"Hola, ¿me ayudan ahora?"}`, 200)
	send("DELETE", msgPath, guestToken, "X-Service-Guest-Token", "", 204)
	post("/api/v1/workspaces/"+s.ws+"/channels/"+s.channel+"/messages", "Bearer "+s.adminToken, "Authorization", `{"content":"Hello, Marta"}`, 201)
	if status, body := s.call(t, "POST", "/rooms/"+roomID+"/close", ""); status != 200 {
		t.Fatalf("close room: got %d %v, want 200", status, body)
	}
	if status, body := s.call(t, "POST", "/outbound-webhooks/"+outID+"/test", ""); status != 200 {
		t.Fatalf("test: got %d %v, want 200", status, body)
	}
	want := []string{"message.created", "room.created", "room.guest_joined", "room.message_created", "room.closed", "webhook.test", "webhook.disabled",
		"message.updated", "message.deleted", "room.message_updated", "room.message_deleted"}
	if translated {
		want = append(want, "message.translated")
	}
	for _, typ := range want {
		rcv.wait(t, typ)
	}
	rcv.mu.Lock()
	got := append([]received(nil), rcv.got...)
	rcv.mu.Unlock()
	seen := map[string]int{}
	for _, d := range got {
		seen[d.header.Get("X-Service-Event")]++
		openapitest.CheckDelivery(t, d.header, d.body)
	}
	t.Logf("validated %d deliveries against the catalog: %v", len(got), seen)
	var disabled struct {
		Data events.Disabled `json:"data"`
	}
	_ = json.Unmarshal(rcv.wait(t, "webhook.disabled").body, &disabled)
	if disabled.Data != (events.Disabled{WebhookID: goneID, Kind: "outbound", Reason: "gone"}) {
		t.Errorf("got webhook.disabled data %+v, want the gone webhook %s, outbound, gone", disabled.Data, goneID)
	}
	if seen["webhook.disabled"] != 1 {
		t.Errorf("got %d webhook.disabled deliveries, want 1", seen["webhook.disabled"])
	}
	status, audit := s.call(t, "GET", "/audit-events", "")
	if status != 200 || !strings.Contains(fmt.Sprint(audit), "webhook.disabled") {
		t.Errorf("audit trail: got %d %v, want a webhook.disabled entry", status, audit)
	}
	for _, e := range audit["data"].([]any) {
		e := e.(map[string]any)
		if e["action"] == "webhook.disabled" && (e["target"].(map[string]any)["id"] != goneID || e["actor"].(map[string]any)["type"] != "system") {
			t.Errorf("got audit entry %v, want the gone webhook disabled by the system", e)
		}
	}
}
