package attempt_test

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/delivery/attempt"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/signature"
)

// TestRateLimitAcrossInstances: two delivery function instances (two
// Deliverers, each with its own cache) consume one queue for a webhook
// with rate_limit 3. Twelve events arrive at once; the receiver gets each
// exactly once, as attempt 1; the shared counter never grants more than
// the limit in one second, and the receiver never sees more than twice
// the limit in one of its seconds (a delivery granted at the end of one
// second may arrive in the next; how late depends on the machine's load,
// so the receiver's clock alone cannot hold the exact limit). The burst
// is granted over at least four seconds; none is failed, and the webhook's
// failure streak never starts.
func TestRateLimitAcrossInstances(t *testing.T) {
	const limit, events = 3, 12
	e := newEnv(t, ms(5, 5, 5))
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(204); return 204 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL,
		map[string]types.AttributeValue{"rate_limit": &types.AttributeValueMemberN{Value: "3"}})
	var all []evs.Delivery
	for range events {
		_, ds := event(t, "burst", w)
		all = append(all, ds...)
	}
	granted := &grantLog{Limiter: e.store.Deliveries, limit: limit}
	e.d.Limiter = granted
	other := &attempt.Deliverer{Store: e.store.Deliveries, Queue: e.queue, Client: e.d.Client, Schedule: e.d.Schedule, Limiter: granted}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		_ = localrun.ConsumeQueue(ctx, e.st.SQS, e.url, e.st.Resources.QueueARNs["DeliveryQueue"], 10, other.HandleSQS)
		close(stopped)
	}()
	defer func() { cancel(); <-stopped }()
	if _, err := e.queue.SendDeliveries(context.Background(), all); err != nil {
		t.Fatal(err)
	}
	e.run(t, func() bool {
		for _, d := range all {
			if e.record(t, d).Status != delivery.StatusSucceeded {
				return false
			}
		}
		return true
	})
	hits := rv.all()
	if len(hits) != events {
		t.Fatalf("receiver got %d deliveries, want %d (each once)", len(hits), events)
	}
	perSecond := map[int64]int{}
	for _, h := range hits {
		if h.header.Get("X-Service-Attempt") != "1" {
			t.Errorf("got attempt %s of %s, want 1: waiting for the limit is not an attempt", h.header.Get("X-Service-Attempt"), h.header.Get("X-Service-Delivery"))
		}
		perSecond[h.started.Unix()]++
	}
	for sec, n := range perSecond {
		if n > 2*limit {
			t.Errorf("receiver got %d deliveries in second %d, want at most %d", n, sec, 2*limit)
		}
	}
	total := 0
	for sec, n := range granted.perSecond() {
		total += n
		if n > limit {
			t.Errorf("the counter granted %d deliveries in second %d, want at most %d", n, sec, limit)
		}
	}
	if total != events {
		t.Errorf("the counter granted %d deliveries, want %d (one each)", total, events)
	}
	if secs := len(granted.perSecond()); secs < events/limit {
		t.Errorf("the counter granted the %d deliveries in %d seconds, want at least %d at %d a second", events, secs, events/limit, limit)
	}
	for _, d := range all {
		if r := e.record(t, d); r.Attempts != 1 || r.Error != "" {
			t.Errorf("got record %+v, want one successful attempt", r)
		}
	}
	if n := e.webhookItem(t, w)["failed_attempts"]; n != nil {
		t.Errorf("got failed_attempts %v, want none: a wait is not a failure", n)
	}
}

// grantLog records, per second, the Takes its Limiter granted (counted
// within the limit).
type grantLog struct {
	delivery.Limiter
	limit int
	mu    sync.Mutex
	secs  map[int64]int
}

func (g *grantLog) Take(ctx context.Context, w delivery.Webhook, at time.Time) (int, error) {
	n, err := g.Limiter.Take(ctx, w, at)
	if err == nil && n <= g.limit {
		g.mu.Lock()
		if g.secs == nil {
			g.secs = map[int64]int{}
		}
		g.secs[at.Unix()]++
		g.mu.Unlock()
	}
	return n, err
}

func (g *grantLog) perSecond() map[int64]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.secs)
}

// TestRateLimitCallBudget counts the calls a rate limit adds: one
// UpdateItem (the second's counter) per received message of a limited
// webhook; a message past the limit costs that and one SendMessage (it
// waits on the queue), and reserves nothing. Each attempt carries both
// signature schemes, which cost no call.
func TestRateLimitCallBudget(t *testing.T) {
	e := newEnv(t, ms(5, 5, 5))
	e.d.Limiter = e.store.Deliveries
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(204); return 204 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL,
		map[string]types.AttributeValue{"rate_limit": &types.AttributeValueMemberN{Value: "1"}})
	// Both messages are handled in the same second, however long the
	// machine takes between them: the deliverer's clock stands still.
	start := time.Now()
	e.d.Now = func() time.Time { return start }
	var want = [][]string{
		{"DynamoDB.GetItem", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem"},
		{"DynamoDB.GetItem", "DynamoDB.UpdateItem", "SQS.SendMessage"},
	}
	for i, calls := range want {
		_, ds := event(t, "limited", w)
		if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
			t.Fatal(err)
		}
		ev := e.receiveOne(t)
		e.st.Calls.Reset()
		failed, got := e.handle(t, ev)
		if len(failed) != 0 {
			t.Fatalf("message %d: batch item failures %v, want none", i+1, failed)
		}
		if strings.Join(got, ",") != strings.Join(calls, ",") {
			t.Fatalf("message %d: calls %v, want %v", i+1, got, calls)
		}
	}
	hits := rv.all()
	if len(hits) != 1 {
		t.Fatalf("receiver got %d deliveries, want 1 (the second waits)", len(hits))
	}
	if hits[0].header.Get(signature.Header) == "" || hits[0].header.Get(signature.StandardHeaderSignature) == "" {
		t.Errorf("got headers %v, want both signature schemes", hits[0].header)
	}
}
