package attempt_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	evs "github.com/chatbridge/chat/pkg/events"
)

// failedDelivery stores an event for w, makes its first attempt (which
// fails at a receiver that always fails, the schedule then ending it) and
// returns its delivery.
func (e *env) failedDelivery(t *testing.T, content string, w evs.Webhook) evs.Delivery {
	t.Helper()
	ev, ds := event(t, content, w)
	body, err := evs.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.Relay.PutEvents(context.Background(), []evs.Event{ev}, [][]byte{body}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.handle(t, e.receiveOne(t))
	return ds[0]
}

// TestConcurrentRedeliveries (issue 24 item 6): eight admins redeliver one
// delivery at once, three times over: each time exactly one is queued and
// the others get redelivery_pending; once the delivery function took the
// queued one, the next is accepted. The attempts the receiver saw are
// 1..n, each once, and the record counts n.
func TestConcurrentRedeliveries(t *testing.T) {
	e := newEnv(t, nil) // no retries: each run is one attempt
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(500); return 500 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	d := e.failedDelivery(t, "redelivered", w)
	r := &delivery.Redeliverer{Store: e.store.Deliveries, Queue: e.queue}
	for round := range 3 {
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
		)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := r.Redeliver(context.Background(), wsID, evs.KindOutbound, w.ID, d.ID)
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}()
		}
		wg.Wait()
		queued := 0
		for _, err := range errs {
			switch {
			case err == nil:
				queued++
			case chat.ErrorCode(err) != chat.ERedeliveryPending:
				t.Fatalf("round %d: redeliver: got %v, want nil or redelivery_pending", round, err)
			}
		}
		if queued != 1 {
			t.Fatalf("round %d: %d redeliveries queued, want exactly 1", round, queued)
		}
		e.handle(t, e.receiveOne(t))
	}
	got := attempts(rv, d.ID)
	wantConsecutive(t, got, 4)
	if rec := e.record(t, d); rec.Attempts != 4 {
		t.Fatalf("record attempts %d, want 4", rec.Attempts)
	}
}

// TestRedeliveriesRateLimited (issue 24 item 6): a webhook takes ten
// redeliveries a minute; the eleventh gets rate_limited with the seconds to
// the window's end, and is accepted in the next window. A deleted
// webhook's delivery is not redelivered (not_found).
func TestRedeliveriesRateLimited(t *testing.T) {
	e := newEnv(t, nil)
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(500); return 500 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	var ds []evs.Delivery
	for range delivery.RedeliveryLimit + 1 {
		ds = append(ds, e.failedDelivery(t, "limited", w))
	}
	now := time.Now().Truncate(time.Minute).Add(15 * time.Second)
	r := &delivery.Redeliverer{Store: e.store.Deliveries, Queue: e.queue, Now: func() time.Time { return now }}
	for i, d := range ds[:delivery.RedeliveryLimit] {
		if err := r.Redeliver(context.Background(), wsID, evs.KindOutbound, w.ID, d.ID); err != nil {
			t.Fatalf("redelivery %d: got %v, want queued", i+1, err)
		}
	}
	err := r.Redeliver(context.Background(), wsID, evs.KindOutbound, w.ID, ds[delivery.RedeliveryLimit].ID)
	var ce *chat.Error
	if chat.ErrorCode(err) != chat.ERateLimited || !errors.As(err, &ce) || ce.RetryAfter != 45 {
		t.Fatalf("redelivery %d: got %v, want rate_limited with Retry-After 45", delivery.RedeliveryLimit+1, err)
	}
	now = now.Add(time.Minute)
	if err := r.Redeliver(context.Background(), wsID, evs.KindOutbound, w.ID, ds[delivery.RedeliveryLimit].ID); err != nil {
		t.Fatalf("redelivery in the next window: got %v, want queued", err)
	}

	// Deleted: both twins go (webhook management's delete).
	for _, k := range []map[string]types.AttributeValue{
		{"pk": &types.AttributeValueMemberS{Value: "WS#" + wsID}, "sk": &types.AttributeValueMemberS{Value: w.Key}},
		{"pk": &types.AttributeValueMemberS{Value: "OWH#" + w.ID}, "sk": &types.AttributeValueMemberS{Value: "#META"}},
	} {
		if _, err := e.st.DB.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: &e.st.Table, Key: k}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Minute)
	if err := r.Redeliver(context.Background(), wsID, evs.KindOutbound, w.ID, ds[0].ID); chat.ErrorCode(err) != chat.ENotFound {
		t.Fatalf("redelivery to a deleted webhook: got %v, want not_found", err)
	}
}
