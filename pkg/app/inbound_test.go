package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/inboundapi"
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
		static("content invisible", `{"content":"\u200b\u200d\ufeff\u2060\u180e\u3164\u115f\u2800"}`, nil, 422, "field:content"),
		static("one visible character among invisibles", `{"content":"\u200b.\u200d"}`, nil, 202, ""),
		static("content at the limit in '<'", `{"content":"`+strings.Repeat("<", 40000)+`"}`, nil, 202, ""),
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
		{"t with leading zeros, signed as sent", w.postPath(w.signed.ID), `{"content":"zeros"}`, map[string]string{signature.Header: "t=00" + strconv.FormatInt(now, 10) +
			",v1=" + signature.SignText([]byte(w.signed.SigningSecret), []byte("00"+strconv.FormatInt(now, 10)), []byte(`{"content":"zeros"}`))}, 202, ""},
		{"t with leading zeros, signed over its value", w.postPath(w.signed.ID), `{"content":"zeros2"}`, map[string]string{signature.Header: "t=00" + strconv.FormatInt(now, 10) +
			",v1=" + signature.Sign([]byte(w.signed.SigningSecret), now, []byte(`{"content":"zeros2"}`))}, 401, "invalid_signature"},
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
	if a, ok := d["attachments"].([]any); !ok || len(a) != 0 {
		t.Errorf("data.attachments = %v, want [] for a post without files", d["attachments"])
	}
	if v, ok := d["thread_id"]; !ok || v != nil {
		t.Errorf("data.thread_id = %v (present %v), want null for a root", v, ok)
	}
	if len(d) != 10 {
		t.Errorf("data has fields %v, want exactly 10", d)
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
	// Warm the cache of the workspace: each request then reads only its
	// webhook's settings (one GetItem) before the calls of its outcome.
	w.postStatic(t, `{"content":"warm"}`, nil)
	w.do(t, "POST", w.postPath(w.signed.ID), `{"content":"warm"}`, w.signedHeaders(`{"content":"warm"}`, time.Now().Unix(), nil))
	signed := func(body, key string, ts int64) func() *httptest.ResponseRecorder {
		return func() *httptest.ResponseRecorder {
			hdr := map[string]string{}
			if key != "" {
				hdr["Idempotency-Key"] = key
			}
			return w.do(t, "POST", w.postPath(w.signed.ID), body, w.signedHeaders(body, ts, hdr))
		}
	}
	now := time.Now().Unix()
	for _, c := range []struct {
		name  string
		send  func() *httptest.ResponseRecorder
		want  int
		state int
	}{
		{"accepted, static", func() *httptest.ResponseRecorder { return w.postStatic(t, `{"content":"a"}`, nil) }, 3, 202},
		{"accepted, static, with key", func() *httptest.ResponseRecorder {
			return w.postStatic(t, `{"content":"b"}`, map[string]string{"Idempotency-Key": "k-b"})
		}, 3, 202},
		{"accepted, signed", signed(`{"content":"c0"}`, "", now), 3, 202},
		{"accepted, signed, with key", signed(`{"content":"c"}`, "k-c", now), 3, 202},
		{"replay, static", func() *httptest.ResponseRecorder {
			return w.postStatic(t, `{"content":"b"}`, map[string]string{"Idempotency-Key": "k-b"})
		}, 4, 202},
		{"replay, signed anew", signed(`{"content":"c"}`, "k-c", now+1), 4, 202},
		{"reused key", func() *httptest.ResponseRecorder {
			return w.postStatic(t, `{"content":"other"}`, map[string]string{"Idempotency-Key": "k-b"})
		}, 4, 422},
		{"replayed signature", signed(`{"content":"c0"}`, "", now), 4, 401},
		{"rejected, bad secret", func() *httptest.ResponseRecorder {
			return w.postStatic(t, `{"content":"d"}`, map[string]string{"X-Service-Webhook-Secret": "bad"})
		}, 3, 401},
		{"rejected, invalid body", func() *httptest.ResponseRecorder { return w.postStatic(t, `{"content":""}`, nil) }, 3, 422},
		{"rejected, invalid body, signed", signed(`{"content":""}`, "", now), 3, 422},
		{"rejected, invalid key, signed", signed(`{"content":"e"}`, strings.Repeat("k", 256), now), 3, 400},
		{"rejected, bad signature", func() *httptest.ResponseRecorder {
			return w.do(t, "POST", w.postPath(w.signed.ID), `{}`, map[string]string{signature.Header: "t=1,v1=00"})
		}, 3, 401},
	} {
		w.st.Calls.Reset()
		rec := c.send()
		if rec.Code != c.state {
			t.Fatalf("%s: status %d, want %d: %s", c.name, rec.Code, c.state, rec.Body)
		}
		if got := w.st.Calls.Total(); got != c.want {
			t.Errorf("%s: %d AWS calls %v, want %d", c.name, got, w.st.Calls.Calls(), c.want)
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
		{"DynamoDB.TransactWriteItems", 0}, // accept: claim and completion at once
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

// The contract: a signature is accepted once it authenticated a request
// that reached step 6, including one answered as a replay. A retry signed
// anew and replayed records its signature: sent again without the key, it
// posts nothing.
func TestResignedRetryCannotPostTwice(t *testing.T) {
	w := newWorld(t, 600)
	body := `{"content":"deploy 7"}`
	key := map[string]string{"Idempotency-Key": "deploy-7"}
	now := time.Now().Unix()
	first := w.do(t, "POST", w.postPath(w.signed.ID), body, w.signedHeaders(body, now, key))
	retryHdr := w.signedHeaders(body, now+1, key)
	retry := w.do(t, "POST", w.postPath(w.signed.ID), body, retryHdr)
	if first.Code != 202 || retry.Code != 202 || retry.Header().Get("Idempotent-Replayed") != "true" || retry.Body.String() != first.Body.String() {
		t.Fatalf("first %d, re-signed retry %d (replayed %q), want 202 and its replay", first.Code, retry.Code, retry.Header().Get("Idempotent-Replayed"))
	}
	delete(retryHdr, "Idempotency-Key")
	again := w.do(t, "POST", w.postPath(w.signed.ID), body, retryHdr)
	if again.Code != 401 || codeOf(t, again) != "signature_replayed" {
		t.Fatalf("the retry's signature without the key: %d %s, want 401 signature_replayed", again.Code, again.Body)
	}
	if n := w.count(t, "MSG#"); n != 1 {
		t.Fatalf("%d messages, want 1", n)
	}
}

// Concurrent requests with one key: while one transaction holding the key
// is in flight, DynamoDB cancels the others with TransactionConflict. The
// store retries; a request still colliding gets 409 idempotency_key_in_use,
// and nothing is written for it.
func TestKeyInUseWhileItsTransactionIsInFlight(t *testing.T) {
	w := newWorld(t, 600)
	w.postStatic(t, `{"content":"warm"}`, nil)
	hdr := map[string]string{"Idempotency-Key": "busy"}
	// The accept transaction: idempotency record, message, log record.
	w.st.Faults.FailWith("DynamoDB.TransactWriteItems", 0, 1, stacktest.TransactionConflict(3, 0))
	w.st.Calls.Reset()
	if rec := w.postStatic(t, `{"content":"once"}`, hdr); rec.Code != 202 {
		t.Fatalf("one collision, retried: %d %s, want 202", rec.Code, rec.Body)
	}
	// The injector answers before the call is counted: the retry is the
	// one transaction counted.
	if calls := w.st.Calls.Calls(); len(calls) != 3 || calls[2] != "DynamoDB.TransactWriteItems" {
		t.Fatalf("calls %v, want the settings, quota and the retried transaction", calls)
	}
	w.st.Faults.FailWith("DynamoDB.TransactWriteItems", 0, 5, stacktest.TransactionConflict(3, 0))
	rec := w.postStatic(t, `{"content":"twice"}`, map[string]string{"Idempotency-Key": "busy-2"})
	if rec.Code != 409 || codeOf(t, rec) != "idempotency_key_in_use" || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("kept colliding: %d %s (Retry-After %q), want 409 idempotency_key_in_use, Retry-After 1", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
	}
	if rec := w.postStatic(t, `{"content":"twice"}`, map[string]string{"Idempotency-Key": "busy-2"}); rec.Code != 202 || rec.Header().Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry after the collisions: %d %s, want a first 202", rec.Code, rec.Body)
	}
	if n := w.count(t, "MSG#"); n != 3 {
		t.Fatalf("%d messages, want 3", n)
	}
}

// A replay whose signature cannot be recorded is a 503, not a replay, and a
// retry then records it.
func TestSignedReplayUnderFailures(t *testing.T) {
	for _, after := range []bool{stacktest.Before, stacktest.After} {
		t.Run(fmt.Sprintf("after=%v", after), func(t *testing.T) {
			w := newWorld(t, 600)
			body := `{"content":"signed once"}`
			key := map[string]string{"Idempotency-Key": "s-1"}
			now := time.Now().Unix()
			if rec := w.do(t, "POST", w.postPath(w.signed.ID), body, w.signedHeaders(body, now, key)); rec.Code != 202 {
				t.Fatalf("first: %d %s", rec.Code, rec.Body)
			}
			retryHdr := w.signedHeaders(body, now+1, key)
			// The replay's transactions: the accept (refused), then log and signature.
			w.st.Faults.Fail("DynamoDB.TransactWriteItems", 1, after)
			if rec := w.do(t, "POST", w.postPath(w.signed.ID), body, retryHdr); rec.Code != 503 {
				t.Fatalf("replay with its signature write failing: %d %s, want 503", rec.Code, rec.Body)
			}
			if rec := w.do(t, "POST", w.postPath(w.signed.ID), body, retryHdr); rec.Code != 202 || rec.Header().Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay retried: %d %s, want a replay", rec.Code, rec.Body)
			}
			delete(retryHdr, "Idempotency-Key")
			if rec := w.do(t, "POST", w.postPath(w.signed.ID), body, retryHdr); codeOf(t, rec) != "signature_replayed" {
				t.Fatalf("the retry's signature without its key: %d %s, want signature_replayed", rec.Code, rec.Body)
			}
			if n := w.count(t, "MSG#"); n != 1 {
				t.Fatalf("%d messages, want 1", n)
			}
		})
	}
}

// setStaticSecret gives the static webhook secret s.
func (w *world) setStaticSecret(t *testing.T, s string) {
	t.Helper()
	_, err := w.st.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(w.st.Table),
		Key:                       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "IWH#" + w.static.ID}, "sk": &types.AttributeValueMemberS{Value: "#META"}},
		UpdateExpression:          aws.String("SET secret_hash = :h"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":h": &types.AttributeValueMemberS{Value: chat.HashToken(s)}}})
	if err != nil {
		t.Fatalf("set secret: %v", err)
	}
}

// A comma in a header means the same in AWS as locally. API Gateway sends
// every header once, repeated ones joined with commas; the V2 adapter then
// splits them on commas and trims the pieces. The secret, the key and the
// signature are read as sent.
func TestCommasInHeadersThroughTheV2Adapter(t *testing.T) {
	w := newWorld(t, 600)
	secret := "whsec_comma, and ,more"
	w.setStaticSecret(t, secret)
	lambda := httpfn.Lambda(map[string]http.Handler{"InboundWebhookFunction": inboundapi.InboundHandler(inboundapi.Service(w.app, time.Minute), w.app.Now, nil)})
	event := func(id, body string, headers map[string]string) events.APIGatewayV2HTTPRequest {
		h := map[string]string{"content-type": "application/json", "user-agent": "curl/8.5.0 (x86_64, linux)"}
		for k, v := range headers {
			h[strings.ToLower(k)] = v
		}
		path := w.postPath(id)
		return events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "POST /webhooks/{webhook}/messages", RawPath: path,
			Headers: h, Body: body, PathParameters: map[string]string{"webhook": id},
			RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: "api.example.invalid", RequestID: "req-1",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: path, SourceIP: "192.0.2.7"}}}
	}
	send := func(ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
		t.Helper()
		resp, err := lambda(context.Background(), ev)
		if err != nil {
			t.Fatalf("lambda: %v", err)
		}
		return resp
	}
	key := "deploy, 42,x"
	body := `{"content":"commas"}`
	first := send(event(w.static.ID, body, map[string]string{"X-Service-Webhook-Secret": secret, "Idempotency-Key": key}))
	if first.StatusCode != 202 {
		t.Fatalf("secret with commas through the adapter: %d %s, want 202", first.StatusCode, first.Body)
	}
	// The same key sent locally is the same key: a replay.
	local := w.postStatic(t, body, map[string]string{"X-Service-Webhook-Secret": secret, "Idempotency-Key": key})
	if local.Code != 202 || local.Header().Get("Idempotent-Replayed") != "true" || local.Body.String() != first.Body {
		t.Fatalf("same key locally: %d replayed=%q, want the replay of the Lambda's answer", local.Code, local.Header().Get("Idempotent-Replayed"))
	}
	// Two header lines locally are what API Gateway joins with a comma.
	req := httptest.NewRequest("POST", w.postPath(w.static.ID), strings.NewReader(`{"content":"two lines"}`))
	req.Header.Add("X-Service-Webhook-Secret", "whsec_comma, and")
	req.Header.Add("X-Service-Webhook-Secret", "more")
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	if rec.Code != 401 {
		t.Fatalf("two header lines joined without the space: %d, want 401 (\"whsec_comma, and,more\" is another secret)", rec.Code)
	}
	for _, c := range []struct {
		name, secret, key string
		status            int
	}{
		{"spaces dropped", "whsec_comma,and,more", "", 401},
		{"first piece only", "whsec_comma", "", 401},
		{"another key is another request", secret, "deploy,42,x", 202},
	} {
		hdr := map[string]string{"X-Service-Webhook-Secret": c.secret}
		if c.key != "" {
			hdr["Idempotency-Key"] = c.key
		}
		resp := send(event(w.static.ID, body, hdr))
		if resp.StatusCode != c.status || resp.Headers["Idempotent-Replayed"] != "" {
			t.Fatalf("%s: %d %v %s, want %d, not a replay", c.name, resp.StatusCode, resp.Headers, resp.Body, c.status)
		}
	}
	// A signature header with spaces after its commas, and two v1 entries.
	sbody := `{"content":"signed commas"}`
	now := time.Now().Unix()
	sig := "t=" + strconv.FormatInt(now, 10) + ", v1=" + strings.Repeat("0", 64) + ", v1=" + signature.Sign([]byte(w.signed.SigningSecret), now, []byte(sbody))
	if resp := send(event(w.signed.ID, sbody, map[string]string{signature.Header: sig})); resp.StatusCode != 202 {
		t.Fatalf("signature with spaces through the adapter: %d %s, want 202", resp.StatusCode, resp.Body)
	}
	// The request log keeps the key as sent, and the whole User-Agent.
	logs := w.do(t, "GET", "/api/v1/workspaces/"+w.ws.ID+"/inbound-webhooks/"+w.static.ID+"/requests", "", map[string]string{"Authorization": "Bearer " + w.token})
	if !strings.Contains(logs.Body.String(), `"idempotency_key":"deploy, 42,x"`) || !strings.Contains(logs.Body.String(), `"user_agent":"curl/8.5.0 (x86_64, linux)"`) {
		t.Fatalf("request log %s, want the key and User-Agent as sent", logs.Body)
	}
	if n := w.count(t, "MSG#"); n != 3 {
		t.Fatalf("%d messages, want 3", n)
	}
}

// body_bytes is the size of the whole body received, past the 64 KiB that
// are read.
func TestRequestLogKeepsTheTrueBodySize(t *testing.T) {
	w := newWorld(t, 600)
	sizes := []int{65535, 65536, 65537, 1 << 20, 10<<20 + 100}
	for _, n := range sizes {
		body := `{"content":"` + strings.Repeat("a", n-len(`{"content":""}`)) + `"}`
		rec := w.postStatic(t, body, nil)
		want := 413
		if n <= 64<<10 {
			want = 422 // content over 40,000 characters
		}
		if rec.Code != want {
			t.Fatalf("%d bytes: status %d, want %d", n, rec.Code, want)
		}
	}
	logs := w.do(t, "GET", "/api/v1/workspaces/"+w.ws.ID+"/inbound-webhooks/"+w.static.ID+"/requests", "", map[string]string{"Authorization": "Bearer " + w.token})
	var page struct {
		Data []struct {
			BodyBytes int `json:"body_bytes"`
		} `json:"data"`
	}
	if err := json.Unmarshal(logs.Body.Bytes(), &page); err != nil || len(page.Data) != len(sizes) {
		t.Fatalf("request log: %v, %d records", err, len(page.Data))
	}
	for i, n := range sizes {
		want := min(n, 10<<20) // a local server stops counting at API Gateway's 10 MB
		if got := page.Data[len(sizes)-1-i].BodyBytes; got != want {
			t.Errorf("body of %d bytes: body_bytes %d, want %d", n, got, want)
		}
	}
}
