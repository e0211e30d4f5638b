package delivery_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/delivery"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/netguard"
)

// memStore is a hand-written delivery.Store: one webhook, attempts counted.
type memStore struct {
	w        delivery.Webhook
	recorded atomic.Int64
}

func (m *memStore) Webhook(context.Context, string, string, string) (delivery.Webhook, error) {
	return m.w, nil
}
func (m *memStore) RecordAttempt(context.Context, delivery.Attempt) error {
	m.recorded.Add(1)
	return nil
}
func (m *memStore) Disable(context.Context, delivery.Webhook, string, time.Time) error { return nil }
func (m *memStore) ClearFailing(context.Context, delivery.Webhook) error               { return nil }
func (m *memStore) Event(context.Context, string) ([]byte, error)                      { return nil, nil }

// BenchmarkDeliveries measures one delivery function's attempts per second
// (batches of ten, as the event source mapping sends them) against a local
// receiver, signing and posting a 1 KiB event each; the store is in memory,
// so this is the function's own ceiling, not DynamoDB's.
func BenchmarkDeliveries(b *testing.B) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	srv.Listener, _ = net.Listen("tcp", "127.0.0.1:0")
	srv.Start()
	defer srv.Close()
	allow, _ := netguard.ParseCIDRs("127.0.0.1/32")
	st := &memStore{w: delivery.Webhook{ID: "W", Kind: evs.KindOutbound, URL: srv.URL, Active: true, Secrets: [][]byte{[]byte("whsig_bench")}}}
	d := &delivery.Deliverer{Store: st, Client: (&netguard.Guard{Allow: allow, AllowOnly: true}).Client(), Schedule: delivery.DefaultSchedule, CacheTTL: time.Minute}
	ev := evs.Event{ID: "E", Type: evs.RoomClosed, WorkspaceID: "WS", CreatedAt: time.Now(), Data: evs.Room{Name: string(make([]byte, 1024))}}
	body, _ := evs.Encode(ev)
	var batch events.SQSEvent
	for i := range 10 {
		msg, _ := evs.Delivery{ID: "D" + strconv.Itoa(i), WebhookID: "W", Kind: evs.KindOutbound, EventType: ev.Type, Body: body}.MarshalQueue()
		batch.Records = append(batch.Records, events.SQSMessage{MessageId: strconv.Itoa(i), Body: msg,
			Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
	}
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if resp, _ := d.HandleSQS(context.Background(), batch); len(resp.BatchItemFailures) != 0 {
			b.Fatalf("failures %v", resp.BatchItemFailures)
		}
	}
	b.ReportMetric(float64(st.recorded.Load())/time.Since(start).Seconds(), "deliveries/s")
}
