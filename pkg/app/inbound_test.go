package app_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/signature"
)

func (w *world) postPath(id string) string { return "/webhooks/" + id + "/messages" }

func (w *world) postStatic(t *testing.T, body string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	h := map[string]string{"X-Service-Webhook-Secret": w.static.Secret}
	for k, v := range hdr {
		h[k] = v
	}
	return w.do(t, "POST", w.postPath(w.static.ID), body, h)
}

func (w *world) signedHeaders(body string, ts int64, hdr map[string]string) map[string]string {
	h := map[string]string{signature.Header: signature.Format(ts, signature.Sign([]byte(w.signed.SigningSecret), ts, []byte(body)))}
	for k, v := range hdr {
		h[k] = v
	}
	return h
}

func codeOf(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var b struct {
		Errors map[string][]string `json:"errors"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	if c := b.Errors["code"]; len(c) == 1 {
		return c[0]
	}
	for field := range b.Errors {
		return "field:" + field
	}
	return ""
}

func TestInboundRules(t *testing.T) {
	w := newWorld(t, 600)
	now := time.Now().Unix()
	good := `{"content":"Deploy finished"}`
	big := `{"content":"` + strings.Repeat("a", 64<<10) + `"}`
	otherChannel := w.other.Channels[0].ID
	type tc struct {
		name   string
		path   string
		body   string
		hdr    map[string]string
		status int
		code   string
	}
	static := func(name, body string, hdr map[string]string, status int, code string) tc {
		h := map[string]string{"X-Service-Webhook-Secret": w.static.Secret}
		for k, v := range hdr {
			h[k] = v
		}
		return tc{name, w.postPath(w.static.ID), body, h, status, code}
	}
	signed := func(name, body string, ts int64, hdr map[string]string, status int, code string) tc {
		return tc{name, w.postPath(w.signed.ID), body, w.signedHeaders(body, ts, hdr), status, code}
	}
	for _, c := range []tc{
		{"unknown webhook", w.postPath("01JDZ8Y7K3Q4W5E6R7T8Y9A0ZZ"), good, nil, 404, "webhook_not_found"},
		{"garbage webhook id", "/webhooks/..%2F..%2Fetc/messages", good, nil, 404, ""},
		static("header secret", good, nil, 202, ""),
		{"body secret", w.postPath(w.static.ID), `{"content":"hi","secret":"` + w.static.Secret + `"}`, nil, 202, ""},
		{"no secret", w.postPath(w.static.ID), good, nil, 401, "missing_credentials"},
		static("wrong secret", good, map[string]string{"X-Service-Webhook-Secret": "nope"}, 401, "invalid_secret"),
		{"wrong body secret", w.postPath(w.static.ID), `{"content":"hi","secret":"nope"}`, nil, 401, "invalid_secret"},
		static("too large", big, nil, 413, "payload_too_large"),
		{"too large before credentials", w.postPath(w.static.ID), big, nil, 413, "payload_too_large"},
		{"credentials before body", w.postPath(w.static.ID), `not json`, nil, 401, "missing_credentials"},
		static("not json", `not json`, nil, 400, "invalid_json"),
		static("array", `[]`, nil, 400, "invalid_json"),
		static("text/plain", good, map[string]string{"Content-Type": "text/plain"}, 415, "unsupported_media_type"),
		static("content missing", `{}`, nil, 422, "field:content"),
		static("content blank", `{"content":"  \n"}`, nil, 422, "field:content"),
		static("content number", `{"content":5}`, nil, 422, "field:content"),
		static("content too long", `{"content":"`+strings.Repeat("a", 40001)+`"}`, nil, 422, "field:content"),
		static("content at the limit", `{"content":"`+strings.Repeat("é", 20000)+`"}`, nil, 202, ""),
		static("channel of another workspace", `{"content":"x","channel_id":"`+otherChannel+`"}`, nil, 422, "field:channel_id"),
		static("channel garbage", `{"content":"x","channel_id":"#general"}`, nil, 422, "field:channel_id"),
		static("own other channel", `{"content":"x","channel_id":"`+w.ws.Channels[1].ID+`"}`, nil, 202, ""),
		static("skip not bool", `{"content":"x","skip_translation":"yes"}`, nil, 422, "field:skip_translation"),
		static("bad idempotency key", good, map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}, 400, "invalid_idempotency_key"),
		static("non-ascii idempotency key", good, map[string]string{"Idempotency-Key": "clé"}, 400, "invalid_idempotency_key"),
		signed("valid signature", good, now, nil, 202, ""),
		signed("signature near the window's edge", `{"content":"edge"}`, now-290, nil, 202, ""),
		signed("stale signature", good, now-310, nil, 401, "signature_expired"),
		signed("future signature", good, now+310, nil, 401, "signature_expired"),
		{"static secret on a signed webhook", w.postPath(w.signed.ID), good, map[string]string{"X-Service-Webhook-Secret": w.signed.Secret}, 401, "missing_signature"},
		{"garbage signature header", w.postPath(w.signed.ID), good, map[string]string{signature.Header: "v1"}, 401, "invalid_signature_header"},
		{"wrong signature", w.postPath(w.signed.ID), good, map[string]string{signature.Header: signature.Format(now, strings.Repeat("0", 64))}, 401, "invalid_signature"},
		{"rotated signature", w.postPath(w.signed.ID), `{"content":"rotated"}`, map[string]string{signature.Header: signature.Format(now,
			signature.Sign([]byte("old-secret-old-secret"), now, []byte(`{"content":"rotated"}`)),
			signature.Sign([]byte(w.signed.SigningSecret), now, []byte(`{"content":"rotated"}`)))}, 202, ""},
		{"signature over another body", w.postPath(w.signed.ID), `{"content":"tampered"}`, w.signedHeaders(good, now+1, nil), 401, "invalid_signature"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := w.do(t, "POST", c.path, c.body, c.hdr)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d; body %s", rec.Code, c.status, rec.Body)
			}
			if c.code != "" {
				if got := codeOf(t, rec); got != c.code {
					t.Fatalf("code %q, want %q", got, c.code)
				}
			}
			if c.status == 404 {
				if rec.Header().Get("X-RateLimit-Limit") != "" {
					t.Fatalf("a 404 carries rate-limit headers: it must not count")
				}
				return
			}
			for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
				if rec.Header().Get(h) == "" {
					t.Fatalf("no %s header", h)
				}
			}
		})
	}
}

func TestInboundAcceptedBody(t *testing.T) {
	w := newWorld(t, 600)
	rec := w.postStatic(t, `{"content":"Hola","skip_translation":true,"ignored":{"x":1}}`, nil)
	if rec.Code != 202 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var b struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	d := b.Data
	want := map[string]any{"workspace_id": w.ws.ID, "channel_id": w.general, "content": "Hola", "skip_translation": true, "status": "queued"}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("data.%s = %v, want %v", k, d[k], v)
		}
	}
	author := d["author"].(map[string]any)
	if author["type"] != "bot" || author["name"] != "CI Bot" || author["avatar_url"] != "https://example.com/bot.png" {
		t.Errorf("author %v, want the webhook's bot identity", author)
	}
	if len(d) != 8 {
		t.Errorf("data has fields %v, want exactly 8", d)
	}
	if n := w.count(t, "MSG#"); n != 1 {
		t.Fatalf("%d messages stored, want 1", n)
	}
}

func TestSignatureReplay(t *testing.T) {
	w := newWorld(t, 600)
	body := `{"content":"once"}`
	hdr := w.signedHeaders(body, time.Now().Unix(), nil)
	if rec := w.do(t, "POST", w.postPath(w.signed.ID), body, hdr); rec.Code != 202 {
		t.Fatalf("first: %d %s", rec.Code, rec.Body)
	}
	rec := w.do(t, "POST", w.postPath(w.signed.ID), body, hdr)
	if rec.Code != 401 || codeOf(t, rec) != "signature_replayed" {
		t.Fatalf("replay: %d %s, want 401 signature_replayed", rec.Code, rec.Body)
	}
	// An idempotent retry may reuse its signature.
	body2 := `{"content":"keyed"}`
	hdr2 := w.signedHeaders(body2, time.Now().Unix(), map[string]string{"Idempotency-Key": "deploy-42"})
	first := w.do(t, "POST", w.postPath(w.signed.ID), body2, hdr2)
	retry := w.do(t, "POST", w.postPath(w.signed.ID), body2, hdr2)
	if first.Code != 202 || retry.Code != 202 || retry.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("keyed retry: %d then %d (replayed=%q), want 202 twice, the second replayed", first.Code, retry.Code, retry.Header().Get("Idempotent-Replayed"))
	}
	// The same signature with another key is a replay, not a retry.
	hdr2["Idempotency-Key"] = "deploy-43"
	if rec := w.do(t, "POST", w.postPath(w.signed.ID), body2, hdr2); codeOf(t, rec) != "signature_replayed" {
		t.Fatalf("same signature, other key: %d %s, want signature_replayed", rec.Code, rec.Body)
	}
	if n := w.count(t, "MSG#"); n != 2 {
		t.Fatalf("%d messages stored, want 2", n)
	}
}

func TestIdempotentReplay(t *testing.T) {
	w := newWorld(t, 600)
	hdr := map[string]string{"Idempotency-Key": "order-1"}
	first := w.postStatic(t, `{"content":"Pay"}`, hdr)
	again := w.postStatic(t, `{"content":"Pay"}`, hdr)
	if first.Code != 202 || again.Code != 202 {
		t.Fatalf("statuses %d, %d", first.Code, again.Code)
	}
	if first.Body.String() != again.Body.String() {
		t.Fatalf("replay differs:\n%s\n%s", first.Body, again.Body)
	}
	if first.Header().Get("Idempotent-Replayed") != "" || again.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("Idempotent-Replayed: first %q, replay %q", first.Header().Get("Idempotent-Replayed"), again.Header().Get("Idempotent-Replayed"))
	}
	// The default channel given explicitly is the same request.
	same := w.postStatic(t, `{"content":"Pay","channel_id":"`+w.general+`"}`, hdr)
	if same.Code != 202 || same.Body.String() != first.Body.String() {
		t.Fatalf("explicit default channel: %d %s", same.Code, same.Body)
	}
	reused := w.postStatic(t, `{"content":"Refund"}`, hdr)
	if reused.Code != 422 || codeOf(t, reused) != "idempotency_key_reused" {
		t.Fatalf("reused key: %d %s", reused.Code, reused.Body)
	}
	// A key is scoped to its webhook.
	other := w.do(t, "POST", w.postPath(w.signed.ID), `{"content":"Pay"}`, w.signedHeaders(`{"content":"Pay"}`, time.Now().Unix(), hdr))
	if other.Code != 202 || other.Header().Get("Idempotent-Replayed") != "" {
		t.Fatalf("same key on another webhook: %d replayed=%q", other.Code, other.Header().Get("Idempotent-Replayed"))
	}
	if n := w.count(t, "MSG#"); n != 2 {
		t.Fatalf("%d messages, want 2", n)
	}
}

func TestConcurrentRequestsWithOneKeyMakeOneMessage(t *testing.T) {
	w := newWorld(t, 600)
	const n = 20
	var wg sync.WaitGroup
	statuses := make(chan int, n)
	bodies := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := w.postStatic(t, `{"content":"once"}`, map[string]string{"Idempotency-Key": "burst"})
			statuses <- rec.Code
			if rec.Code == 202 {
				bodies <- rec.Body.String()
			}
		}()
	}
	wg.Wait()
	close(statuses)
	close(bodies)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[202]+counts[409] != n || counts[202] == 0 {
		t.Fatalf("statuses %v, want only 202 and 409, at least one 202", counts)
	}
	first := ""
	for b := range bodies {
		if first == "" {
			first = b
		} else if b != first {
			t.Fatalf("two different accepted bodies:\n%s\n%s", first, b)
		}
	}
	if m := w.count(t, "MSG#"); m != 1 {
		t.Fatalf("%d messages stored, want exactly 1", m)
	}
}

func TestQuotaOfFive(t *testing.T) {
	w := newWorld(t, 5)
	good := `{"content":"ok"}`
	bad := map[string]string{"X-Service-Webhook-Secret": "wrong"}
	plan := []struct {
		hdr    map[string]string
		status int
	}{{nil, 202}, {bad, 401}, {nil, 202}, {bad, 401}, {nil, 202}, {nil, 429}, {bad, 429}}
	// Keep all seven in one quota window.
	if s := time.Now().Second(); s > 50 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	for i, p := range plan {
		rec := w.postStatic(t, good, p.hdr)
		if rec.Code != p.status {
			t.Fatalf("request %d: status %d, want %d (%s)", i+1, rec.Code, p.status, rec.Body)
		}
		if got, want := rec.Header().Get("X-RateLimit-Remaining"), strconv.Itoa(max(0, 5-(i+1))); got != want {
			t.Errorf("request %d: X-RateLimit-Remaining %s, want %s", i+1, got, want)
		}
		if rec.Header().Get("X-RateLimit-Limit") != "5" {
			t.Errorf("request %d: X-RateLimit-Limit %q", i+1, rec.Header().Get("X-RateLimit-Limit"))
		}
		if p.status == 429 {
			ra, _ := strconv.Atoi(rec.Header().Get("Retry-After"))
			if ra < 1 || ra > 60 {
				t.Errorf("request %d: Retry-After %q", i+1, rec.Header().Get("Retry-After"))
			}
		}
	}
	// The request log holds all seven, newest first, without a secret.
	rec := w.do(t, "GET", "/api/v1/workspaces/"+w.ws.ID+"/inbound-webhooks/"+w.static.ID+"/requests", "", map[string]string{"Authorization": "Bearer " + w.token})
	if rec.Code != 200 {
		t.Fatalf("request log: %d %s", rec.Code, rec.Body)
	}
	var logs struct {
		Data []map[string]any `json:"data"`
	}
	json.Unmarshal(rec.Body.Bytes(), &logs)
	if len(logs.Data) != 7 {
		t.Fatalf("request log has %d records, want 7", len(logs.Data))
	}
	var statuses []string
	for i := len(logs.Data) - 1; i >= 0; i-- {
		statuses = append(statuses, fmt.Sprint(logs.Data[i]["status"]))
	}
	if got := strings.Join(statuses, ","); got != "202,401,202,401,202,429,429" {
		t.Fatalf("logged statuses oldest first %s", got)
	}
	if len(logs.Data[0]) != 14 {
		t.Errorf("a log record has fields %v, want the contract's 14", logs.Data[0])
	}
	if strings.Contains(rec.Body.String(), w.static.Secret) || strings.Contains(rec.Body.String(), "wrong") {
		t.Fatalf("request log leaks a credential: %s", rec.Body)
	}
}

func TestRequestLogAccess(t *testing.T) {
	w := newWorld(t, 600)
	w.postStatic(t, `{"content":"x"}`, nil)
	path := "/api/v1/workspaces/" + w.ws.ID + "/inbound-webhooks/" + w.static.ID + "/requests"
	if rec := w.do(t, "GET", path, "", nil); rec.Code != 401 || strings.TrimSpace(rec.Body.String()) != `{"message":"Unauthenticated."}` {
		t.Fatalf("no token: %d %s", rec.Code, rec.Body)
	}
	if rec := w.do(t, "GET", path, "", map[string]string{"Authorization": "Bearer " + w.other.Users[0].APIToken}); rec.Code != 403 {
		t.Fatalf("other workspace's token: %d", rec.Code)
	}
	otherPath := "/api/v1/workspaces/" + w.ws.ID + "/inbound-webhooks/01JDZ8Y7K3Q4W5E6R7T8Y9A0ZZ/requests"
	if rec := w.do(t, "GET", otherPath, "", map[string]string{"Authorization": "Bearer " + w.token}); rec.Code != 404 {
		t.Fatalf("unknown webhook: %d", rec.Code)
	}
}

func TestInboundCallBudgets(t *testing.T) {
	w := newWorld(t, 600)
	// Warm the webhook cache.
	w.postStatic(t, `{"content":"warm"}`, nil)
	w.do(t, "POST", w.postPath(w.signed.ID), `{"content":"warm"}`, w.signedHeaders(`{"content":"warm"}`, time.Now().Unix(), nil))
	for _, c := range []struct {
		name  string
		send  func() *httptest.ResponseRecorder
		max   int
		state int
	}{
		{"accepted, static", func() *httptest.ResponseRecorder { return w.postStatic(t, `{"content":"a"}`, nil) }, 3, 202},
		{"accepted, static, with key", func() *httptest.ResponseRecorder {
			return w.postStatic(t, `{"content":"b"}`, map[string]string{"Idempotency-Key": "k-b"})
		}, 3, 202},
		{"accepted, signed, with key", func() *httptest.ResponseRecorder {
			body := `{"content":"c"}`
			return w.do(t, "POST", w.postPath(w.signed.ID), body, w.signedHeaders(body, time.Now().Unix(), map[string]string{"Idempotency-Key": "k-c"}))
		}, 3, 202},
		{"rejected, bad secret", func() *httptest.ResponseRecorder {
			return w.postStatic(t, `{"content":"d"}`, map[string]string{"X-Service-Webhook-Secret": "bad"})
		}, 2, 401},
		{"rejected, invalid body", func() *httptest.ResponseRecorder { return w.postStatic(t, `{"content":""}`, nil) }, 2, 422},
		{"rejected, bad signature", func() *httptest.ResponseRecorder {
			return w.do(t, "POST", w.postPath(w.signed.ID), `{}`, map[string]string{signature.Header: "t=1,v1=00"})
		}, 2, 401},
	} {
		w.st.Calls.Reset()
		rec := c.send()
		if rec.Code != c.state {
			t.Fatalf("%s: status %d, want %d: %s", c.name, rec.Code, c.state, rec.Body)
		}
		if got := w.st.Calls.Total(); got > c.max {
			t.Errorf("%s: %d AWS calls %v, want at most %d", c.name, got, w.st.Calls.Calls(), c.max)
		} else {
			t.Logf("%s: %d AWS calls %v", c.name, got, w.st.Calls.Calls())
		}
	}
}

// TestNoLostOrDuplicateMessageUnderFailures fails each DynamoDB step of the
// accepted path, before and after it reaches the server, and retries with
// the same key: exactly one message results, and a 202 is only ever given
// for a stored message.
func TestNoLostOrDuplicateMessageUnderFailures(t *testing.T) {
	steps := []struct {
		op   string
		skip int
	}{
		{"DynamoDB.UpdateItem", 0},         // quota
		{"DynamoDB.TransactWriteItems", 0}, // claim
		{"DynamoDB.TransactWriteItems", 1}, // accept
	}
	for _, step := range steps {
		for _, after := range []bool{stacktest.Before, stacktest.After} {
			name := fmt.Sprintf("%s#%d after=%v", step.op, step.skip, after)
			t.Run(name, func(t *testing.T) {
				w := newWorld(t, 600)
				w.postStatic(t, `{"content":"warm"}`, nil) // warm cache; 1 message
				hdr := map[string]string{"Idempotency-Key": "retry-me"}
				w.st.Faults.Fail(step.op, step.skip, after)
				first := w.postStatic(t, `{"content":"important"}`, hdr)
				if first.Code != 503 {
					t.Fatalf("faulted request: %d %s, want 503", first.Code, first.Body)
				}
				if first.Header().Get("Retry-After") == "" {
					t.Fatalf("503 without Retry-After")
				}
				var retry *httptest.ResponseRecorder
				for i := 0; i < 20; i++ {
					retry = w.postStatic(t, `{"content":"important"}`, hdr)
					if retry.Code != 409 {
						break
					}
					time.Sleep(time.Second)
				}
				if retry.Code != 202 {
					t.Fatalf("retry: %d %s, want 202", retry.Code, retry.Body)
				}
				if got := w.count(t, "MSG#"); got != 2 {
					t.Fatalf("%d messages after fault and retry, want 2 (warm-up + exactly one)", got)
				}
			})
		}
	}
}
