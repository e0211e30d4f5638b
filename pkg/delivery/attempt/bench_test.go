package attempt_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/delivery/attempt"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/netguard"
)

// memStore is a hand-written delivery.Store: webhooks by key, attempts
// counted, every number free, failure streaks and slow marks kept as the
// table keeps them.
type memStore struct {
	mu       sync.Mutex
	hooks    map[string]delivery.Webhook
	recorded atomic.Int64
}

func (m *memStore) Webhook(_ context.Context, _, _, key string) (delivery.Webhook, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hooks[key], nil
}
func (m *memStore) Reserve(_ context.Context, r delivery.Reservation) (int, bool, delivery.State, error) {
	return max(r.Number, 1), true, delivery.State{}, nil
}
func (m *memStore) RecordAttempt(context.Context, delivery.Attempt) error {
	m.recorded.Add(1)
	return nil
}
func (m *memStore) ExtendFailing(_ context.Context, w delivery.Webhook, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.hooks[w.Key]
	if h.FailingSince.IsZero() {
		h.FailingSince = at
	}
	h.FailedAttempts++
	m.hooks[w.Key] = h
	return nil
}
func (m *memStore) MarkSlow(_ context.Context, w delivery.Webhook, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.hooks[w.Key]
	if h.SlowSince.IsZero() {
		h.SlowSince = at
	}
	m.hooks[w.Key] = h
	return nil
}
func (m *memStore) Disable(context.Context, delivery.Webhook, string, time.Time) error {
	return nil
}
func (m *memStore) ClearFailing(_ context.Context, w delivery.Webhook) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.hooks[w.Key]
	h.FailingSince, h.FailedAttempts, h.SlowSince = time.Time{}, 0, time.Time{}
	m.hooks[w.Key] = h
	return nil
}
func (m *memStore) Event(context.Context, string) ([]byte, error) { return nil, nil }

// memQueue is a hand-written delivery.Queue that counts retries.
type memQueue struct{ sent atomic.Int64 }

func (q *memQueue) Schedule(context.Context, evs.Delivery, time.Duration) error {
	q.sent.Add(1)
	return nil
}

// BenchmarkDeliveries measures one delivery function's attempts per second
// (batches of ten, as the event source mapping sends them, run in
// parallel) against local receivers, signing and posting a 1 KiB event
// each; the store and queue are in memory, so this is the function's own
// ceiling, not DynamoDB's. In "20pct-timeout" one receiver in five never
// answers and the client gives up after 200 ms (10 s in AWS): every batch
// that holds such a delivery lasts the timeout, which is what bounds the
// function (docs/delivery.md, "How many receivers can be down").
func BenchmarkDeliveries(b *testing.B) {
	for _, c := range []struct {
		name    string
		timeout int // every timeout-th receiver (0: none) hangs
	}{{"all-answer", 0}, {"20pct-timeout", 5}} {
		b.Run(c.name, func(b *testing.B) {
			ok := loopback(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
			hang := loopback(b, hangs)
			allow, _ := netguard.ParseCIDRs("127.0.0.1/32")
			client := (&netguard.Guard{Allow: allow, AllowOnly: true}).Client()
			client.Timeout = 200 * time.Millisecond
			st := &memStore{hooks: map[string]delivery.Webhook{}}
			q := &memQueue{}
			d := &attempt.Deliverer{Store: st, Queue: q, Client: client, Schedule: attempt.DefaultSchedule}
			ev := evs.Event{ID: "E", Type: evs.RoomClosed, WorkspaceID: "WS", CreatedAt: time.Now(), Data: evs.Room{Name: string(make([]byte, 1024))}}
			body, _ := evs.Encode(ev)
			// 50 webhooks, every timeout-th one hanging.
			var msgs []string
			for i := range 50 {
				key := "W" + strconv.Itoa(i)
				url := ok.URL
				if c.timeout > 0 && i%c.timeout == 0 {
					url = hang.URL
				}
				st.hooks[key] = delivery.Webhook{ID: key, Kind: evs.KindOutbound, Key: key, URL: url, Active: true, Secrets: [][]byte{[]byte("whsig_bench")}}
				msg, _ := evs.Delivery{ID: "D" + strconv.Itoa(i), WebhookID: key, WebhookKey: key, Kind: evs.KindOutbound, EventID: ev.ID, EventType: ev.Type, Body: body}.MarshalQueue()
				msgs = append(msgs, msg)
			}
			// A fixed shuffle, so that the hanging receivers spread over
			// batches as a queue's order would spread them.
			for i := range msgs {
				j := (i*37 + 11) % len(msgs)
				msgs[i], msgs[j] = msgs[j], msgs[i]
			}
			i := 0
			for b.Loop() {
				var batch events.SQSEvent
				for range 10 {
					batch.Records = append(batch.Records, events.SQSMessage{MessageId: strconv.Itoa(i), Body: msgs[i%len(msgs)]})
					i++
				}
				if resp, _ := d.HandleSQS(context.Background(), batch); len(resp.BatchItemFailures) != 0 {
					b.Fatalf("failures %v", resp.BatchItemFailures)
				}
			}
			// Every message handled is one attempt recorded: the metric is
			// the attempts the store saw over the loop's own time
			// (b.Elapsed: setup excluded), and a run that recorded none is
			// an error, not a 0.
			if got := st.recorded.Load(); got != int64(i) {
				b.Fatalf("recorded %d attempts, want %d (one per message handled)", got, i)
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}
