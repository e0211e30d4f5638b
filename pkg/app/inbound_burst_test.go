package app_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/stacktest"
)

// TestWebhookBurstIsAllAccepted: a bot's burst, many posts and changes of
// one inbound webhook at once (static and signed, with and without
// distinct Idempotency-Keys, edits of its messages among them), is all
// accepted, once each, on the strict local AWS, which cancels
// transactions that meet as DynamoDB does. Before, every acceptance's
// transaction checked the webhook's item, so they met one another: of 50
// such posts 14–24 were accepted and the others refused with 409
// idempotency_key_in_use (distinct keys) or 503.
func TestWebhookBurstIsAllAccepted(t *testing.T) {
	w := newWorld(t, 600)
	edited := make([]string, 10)
	for i := range edited {
		edited[i] = w.acceptedID(t, fmt.Sprintf(`{"content":"build %d started"}`, i))
	}
	type sent struct {
		name string
		code int
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes []sent
	)
	send := func(name string, f func() int) {
		wg.Go(func() {
			c := f()
			mu.Lock()
			codes = append(codes, sent{name, c})
			mu.Unlock()
		})
	}
	ts := time.Now().Unix()
	for i := range 20 {
		send("static", func() int { return w.postStatic(t, fmt.Sprintf(`{"content":"line %d"}`, i), nil).Code })
		send("static, keyed", func() int {
			return w.postStatic(t, fmt.Sprintf(`{"content":"keyed %d"}`, i), map[string]string{"Idempotency-Key": fmt.Sprintf("burst-%d", i)}).Code
		})
		send("signed, keyed", func() int {
			body := fmt.Sprintf(`{"content":"signed %d"}`, i)
			return w.do(t, "POST", w.postPath(w.signed.ID), body, w.signedHeaders(body, ts, map[string]string{"Idempotency-Key": fmt.Sprintf("s-%d", i)})).Code
		})
	}
	for i, id := range edited {
		send("edit", func() int {
			return w.do(t, "PATCH", "/webhooks/"+w.static.ID+"/messages/"+id, fmt.Sprintf(`{"content":"build %d passed"}`, i),
				map[string]string{"X-Service-Webhook-Secret": w.static.Secret}).Code
		})
	}
	wg.Wait()
	want := map[string]int{"static": 202, "static, keyed": 202, "signed, keyed": 202, "edit": 200}
	refused := map[string]map[int]int{}
	for _, c := range codes {
		if c.code != want[c.name] {
			if refused[c.name] == nil {
				refused[c.name] = map[int]int{}
			}
			refused[c.name][c.code]++
		}
	}
	if len(refused) > 0 {
		t.Fatalf("of %d concurrent requests of two webhooks, refused by kind and status: %v; want every post 202 and every edit 200", len(codes), refused)
	}
	if n := w.count(t, "MSG#"); n != 70 {
		t.Fatalf("%d messages stored, want 70 (10 edited, 60 posted): each once", n)
	}
}

// TestThrottledAcceptIsRetriedThen503: an accept transaction DynamoDB
// cancels for a partition's throughput (reason ThrottlingError, as a burst
// to one channel gets) is retried after a pause; one still throttled after
// five tries is a 503 with Retry-After, never a 500, and writes nothing.
// Before, the cancellation was "an unexpected reason": 500 internal_error.
func TestThrottledAcceptIsRetriedThen503(t *testing.T) {
	w := newWorld(t, 600)
	w.postStatic(t, `{"content":"warm"}`, nil)
	w.st.Faults.FailWith("DynamoDB.TransactWriteItems", 0, 2, stacktest.TransactionThrottled(2, 0))
	if rec := w.postStatic(t, `{"content":"after two throttles"}`, nil); rec.Code != 202 {
		t.Fatalf("throttled twice: %d %s, want 202 after the retries", rec.Code, rec.Body)
	}
	w.st.Faults.FailWith("DynamoDB.TransactWriteItems", 0, 5, stacktest.TransactionThrottled(2, 0))
	rec := w.postStatic(t, `{"content":"kept throttled"}`, map[string]string{"Idempotency-Key": "throttled-1"})
	if rec.Code != 503 || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("kept throttled: %d %s (Retry-After %q), want 503 with Retry-After", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
	}
	if n := w.count(t, "MSG#"); n != 2 {
		t.Fatalf("%d messages, want 2 (warm, after two throttles)", n)
	}
	if rec := w.postStatic(t, `{"content":"kept throttled"}`, map[string]string{"Idempotency-Key": "throttled-1"}); rec.Code != 202 || rec.Header().Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry of the refused request: %d %s, want a first 202", rec.Code, rec.Body)
	}
}
