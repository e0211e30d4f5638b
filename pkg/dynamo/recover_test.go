package dynamo_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/dynamo/deliverystore"
	"github.com/chatbridge/chat/pkg/events"
)

const (
	recoverWS      = "01JDA0000000000000000000WS"
	recoverWebhook = "01JDA0000000000000000000WH"
)

// queryReads counts the Query calls made with a configuration and the
// items they read (ScannedCount: what a Query pays for, filtered or not).
type queryReads struct {
	mu           sync.Mutex
	calls, items int
}

func (q *queryReads) install(cfg *aws.Config) {
	cfg.APIOptions = append(cfg.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("CountQueryReads",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleInitialize(ctx, in)
				if r, ok := out.Result.(*dynamodb.QueryOutput); ok {
					q.mu.Lock()
					q.calls++
					q.items += int(r.ScannedCount)
					q.mu.Unlock()
				}
				return out, md, err
			}), middleware.After)
	})
}

func (q *queryReads) take() (calls, items int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	calls, items = q.calls, q.items
	q.calls, q.items = 0, 0
	return calls, items
}

// batchQueue is the recovery's queue: it keeps what it was sent, or
// refuses every message while down.
type batchQueue struct {
	sent []events.Delivery
	down bool
}

func (q *batchQueue) SendDeliveries(_ context.Context, ds []events.Delivery) ([]int, error) {
	if q.down {
		var all []int
		for i := range ds {
			all = append(all, i)
		}
		return all, errors.New("queue down")
	}
	q.sent = append(q.sent, ds...)
	return nil, nil
}

// deliverer makes a webhook's attempts as the delivery function records
// them: a reservation, then its result.
type deliverer struct {
	t  *testing.T
	s  *deliverystore.Store
	at time.Time
}

func (d deliverer) attempt(del events.Delivery, number int, status string) {
	d.t.Helper()
	ctx := context.Background()
	lease := delivery.Lease{Until: d.at.Add(time.Minute), Token: del.ID + status}
	n, ok, st, err := d.s.Reserve(ctx, delivery.Reservation{Delivery: del, Number: number, At: d.at, Lease: lease})
	if err != nil || !ok {
		d.t.Fatalf("reserve %s: %d %v %+v %v", del.ID, n, ok, st, err)
	}
	a := delivery.Attempt{Delivery: del, Number: n, At: d.at, Status: status, DurationMS: 3, Lease: lease}
	switch status {
	case delivery.StatusFailed:
		a.ResponseStatus, a.Error = 500, "http_500"
	case delivery.StatusPending:
		a.ResponseStatus, a.Error, a.NextAt = 500, "http_500", d.at.Add(time.Minute)
	default:
		a.ResponseStatus = 204
	}
	if err := d.s.RecordAttempt(ctx, a); err != nil {
		d.t.Fatalf("record %s: %v", del.ID, err)
	}
}

// TestRecoverReadsFailedDeliveriesOnly: a recovery over a window of a
// busy webhook reads its failed deliveries only (one Query, as many items
// as there are failed ones), however many succeeded in the window; it
// queues exactly those failed at the end (not one redelivered since, not
// one waiting for its retry, not a test, not one before the window),
// continuing their attempt numbers; a second call reads and queues
// nothing; a claim released when the queue is down is found again.
func TestRecoverReadsFailedDeliveriesOnly(t *testing.T) {
	st := stacktest.New(t)
	ctx := context.Background()
	now := time.Now().UTC()
	ids := chat.NewIDs()
	deliver := deliverer{t: t, s: deliverystore.New(dynamodb.NewFromConfig(st.As("DeliverWebhooksFunction")), st.Table), at: now}
	at := func(ago time.Duration) events.Delivery {
		return events.Delivery{ID: ids.New(now.Add(-ago)), WebhookID: recoverWebhook, Kind: events.KindOutbound, WorkspaceID: recoverWS,
			WebhookKey: "OWH#2026-11-01T00:00:00.000000000Z#" + recoverWebhook, EventID: ids.New(now.Add(-ago)), EventType: events.MessageCreated}
	}
	const succeeded = 300
	for i := range succeeded {
		deliver.attempt(at(50*time.Minute-time.Duration(i)*time.Second), 1, delivery.StatusSucceeded)
	}
	// Failed at the end: once, and after three attempts.
	var want []string
	for i, attempts := range []int{1, 3, 1} {
		d := at(40*time.Minute - time.Duration(i)*time.Minute)
		for n := 1; n < attempts; n++ {
			deliver.attempt(d, n, delivery.StatusPending)
		}
		deliver.attempt(d, attempts, delivery.StatusFailed)
		want = append(want, d.ID)
	}
	redelivered := at(30 * time.Minute)
	deliver.attempt(redelivered, 1, delivery.StatusFailed)
	deliver.attempt(redelivered, 0, delivery.StatusSucceeded)
	deliver.attempt(at(20*time.Minute), 1, delivery.StatusPending)
	deliver.attempt(at(2*time.Hour), 1, delivery.StatusFailed)
	test := at(10 * time.Minute)
	test.EventType = events.WebhookTest
	tester := deliverystore.New(dynamodb.NewFromConfig(st.As("TestOutboundWebhookFunction")), st.Table)
	if err := tester.PutTestDelivery(ctx, delivery.Attempt{Delivery: test, Number: 1, At: now, Status: delivery.StatusFailed, Error: "http_500"}); err != nil {
		t.Fatal(err)
	}

	cfg := st.As("RecoverOutboundDeliveriesFunction")
	var reads queryReads
	reads.install(&cfg)
	store := deliverystore.New(dynamodb.NewFromConfig(cfg), st.Table)
	queue := &batchQueue{}
	r := &delivery.Recoverer{Store: store, Queue: queue, Now: func() time.Time { return now }}
	recoverAll := func() int {
		t.Helper()
		n, err := r.Recover(ctx, recoverWS, events.KindOutbound, recoverWebhook, now.Add(-time.Hour), now)
		if err != nil {
			t.Fatalf("recover: %v", err)
		}
		return n
	}

	n := recoverAll()
	calls, items := reads.take()
	t.Logf("recover over %d deliveries, %d failed: %d Query calls, %d items read", succeeded+8, len(want), calls, items)
	if calls != 1 || items != len(want) {
		t.Errorf("recover read %d items in %d Query calls, want %d in 1: its reads grow with the %d successful deliveries",
			items, calls, len(want), succeeded)
	}
	var got []string
	for _, d := range queue.sent {
		got = append(got, d.ID)
	}
	if n != len(want) || !slices.Equal(got, want) {
		t.Fatalf("queued %d: %v, want %v", n, got, want)
	}
	for i, base := range []int{1, 3, 1} {
		if d := queue.sent[i]; d.AttemptBase != base || d.Attempt != 0 {
			t.Errorf("%s queued as attempt %d after %d, want the next after %d", d.ID, d.Attempt, d.AttemptBase, base)
		}
		rec, err := deliverystore.New(st.DB, st.Table).Delivery(ctx, recoverWS, recoverWebhook, want[i])
		if err != nil || rec.Status != delivery.StatusPending {
			t.Errorf("%s after its recovery: %+v %v, want pending", want[i], rec, err)
		}
	}

	if n := recoverAll(); n != 0 {
		t.Errorf("second recovery queued %d, want none: they are pending", n)
	}
	if calls, items := reads.take(); calls != 1 || items != 0 {
		t.Errorf("second recovery read %d items in %d calls, want none in 1: pending deliveries are not in the failed index", items, calls)
	}

	// The deliverer takes the first one up and it fails again: it is
	// failed once more (after 2 attempts), and found again, once the queue
	// is up: a claim released while it is down leaves it failed.
	deliver.attempt(queue.sent[0], 2, delivery.StatusFailed)
	queue.sent, queue.down = nil, true
	if n, err := r.Recover(ctx, recoverWS, events.KindOutbound, recoverWebhook, now.Add(-time.Hour), now); err == nil || n != 0 {
		t.Fatalf("recovery with the queue down: %d %v, want none queued and an error", n, err)
	}
	queue.down = false
	if n := recoverAll(); n != 1 || queue.sent[0].ID != want[0] || queue.sent[0].AttemptBase != 2 {
		t.Fatalf("recovery after a release: %d %+v, want %s after 2 attempts", n, queue.sent, want[0])
	}
}

// TestIndexFailedDeliveriesWrittenBefore: the failed records written
// before FailedDeliveryIndex (no failed_id) are indexed once, and only
// those: not a test's, a success, a pending one or one indexed already.
// A recovery then finds them.
func TestIndexFailedDeliveriesWrittenBefore(t *testing.T) {
	st := stacktest.New(t)
	ctx := context.Background()
	now := time.Now().UTC()
	ids := chat.NewIDs()
	admin := deliverystore.New(st.DB, st.Table)
	put := func(status, eventType string) string {
		t.Helper()
		id := ids.New(now.Add(-time.Hour))
		item, err := attributevalue.MarshalMap(map[string]any{"pk": "DLV#" + recoverWS + "#" + recoverWebhook, "sk": "DLV#" + id,
			"id": id, "webhook_id": recoverWebhook, "webhook_kind": events.KindOutbound, "workspace_id": recoverWS,
			"webhook_key": "OWH#2026-11-01T00:00:00.000000000Z#" + recoverWebhook, "event_id": id, "event_type": eventType,
			"status": status, "attempts": 6})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &st.Table, Item: item}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	old := put(delivery.StatusFailed, events.MessageCreated)
	put(delivery.StatusFailed, events.WebhookTest)
	put(delivery.StatusSucceeded, events.MessageCreated)
	put(delivery.StatusPending, events.MessageCreated)
	deliver := deliverer{t: t, s: deliverystore.New(dynamodb.NewFromConfig(st.As("DeliverWebhooksFunction")), st.Table), at: now}
	recent := events.Delivery{ID: ids.New(now.Add(-time.Minute)), WebhookID: recoverWebhook, Kind: events.KindOutbound, WorkspaceID: recoverWS,
		WebhookKey: "OWH#2026-11-01T00:00:00.000000000Z#" + recoverWebhook, EventID: ids.New(now), EventType: events.MessageCreated}
	deliver.attempt(recent, 1, delivery.StatusFailed)

	if n, err := admin.IndexFailedDeliveries(ctx); err != nil || n != 1 {
		t.Fatalf("indexed %d, %v; want the one failed record written before the index", n, err)
	}
	if n, err := admin.IndexFailedDeliveries(ctx); err != nil || n != 0 {
		t.Fatalf("indexed %d again, %v; want none", n, err)
	}
	queue := &batchQueue{}
	r := &delivery.Recoverer{Store: deliverystore.New(dynamodb.NewFromConfig(st.As("RecoverOutboundDeliveriesFunction")), st.Table),
		Queue: queue, Now: func() time.Time { return now }}
	n, err := r.Recover(ctx, recoverWS, events.KindOutbound, recoverWebhook, now.Add(-2*time.Hour), now)
	if err != nil || n != 2 || queue.sent[0].ID != old || queue.sent[0].AttemptBase != 6 || queue.sent[1].ID != recent.ID {
		t.Fatalf("recovered %d %+v, %v; want %s after 6 attempts, then %s", n, queue.sent, err, old, recent.ID)
	}
}
