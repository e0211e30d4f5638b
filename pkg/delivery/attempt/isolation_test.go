package attempt_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/delivery"
	evs "github.com/chatbridge/chat/pkg/events"
)

// queueCounts returns the delivery queue's visible, in-flight and delayed
// message counts.
func queueCounts(t *testing.T, e *env) (visible, inFlight, delayed int) {
	t.Helper()
	return queueCountsAt(t, e, e.url)
}

// queueCountsAt is queueCounts of the queue at url.
func queueCountsAt(t *testing.T, e *env, url string) (visible, inFlight, delayed int) {
	t.Helper()
	out, err := e.st.SQS.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible, sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed}})
	if err != nil {
		t.Fatal(err)
	}
	n := func(k string) int { v, _ := strconv.Atoi(out.Attributes[k]); return v }
	return n("ApproximateNumberOfMessages"), n("ApproximateNumberOfMessagesNotVisible"), n("ApproximateNumberOfMessagesDelayed")
}

// attempts returns the X-Service-Attempt numbers the receiver got for
// delivery id, in order.
func attempts(rv *receiver, id string) []int {
	var out []int
	for _, h := range rv.all() {
		if h.header.Get("X-Service-Delivery") == id {
			n, _ := strconv.Atoi(h.header.Get("X-Service-Attempt"))
			out = append(out, n)
		}
	}
	return out
}

// wantConsecutive fails unless got is 1..n, each once, in any order.
func wantConsecutive(t *testing.T, got []int, n int) {
	t.Helper()
	s := slices.Sorted(slices.Values(got))
	want := make([]int, n)
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(s, want) {
		t.Fatalf("attempt numbers %v, want each of 1..%d once", got, n)
	}
}

// TestConcurrentFailuresToOneWebhookAllRecorded (issue 18 item 2): ten
// deliveries of one batch to one down endpoint all fail at once. Each
// attempt is recorded and its retry queued even when DynamoDB cancels
// every transaction that touches the webhook item (TransactionConflict,
// which the SDK does not retry), and nothing waits in flight.
func TestConcurrentFailuresToOneWebhookAllRecorded(t *testing.T) {
	e := newEnv(t, []time.Duration{time.Hour})
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(503); return 503 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	var ds []evs.Delivery
	for i := range 10 {
		_, d := event(t, "down "+strconv.Itoa(i), w)
		ds = append(ds, d...)
	}
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.st.Faults.FailWith("DynamoDB.TransactWriteItems", 0, 100, stacktest.TransactionConflict(2, 1))
	ev := e.receive(t, e.url)
	for len(ev.Records) < 10 {
		more := e.receive(t, e.url)
		if len(more.Records) == 0 {
			t.Fatalf("received %d of 10 deliveries", len(ev.Records))
		}
		ev.Records = append(ev.Records, more.Records...)
	}
	start := time.Now()
	if failed, _ := e.handle(t, ev); len(failed) != 0 {
		t.Fatalf("batch item failures %v, want none", failed)
	}
	for _, d := range ds {
		r := e.record(t, d)
		if r.Attempts != 1 || r.Status != delivery.StatusPending || r.Error != "http_503" || r.NextAttemptAt.Before(start.Add(47*time.Minute)) {
			t.Fatalf("record %+v, want attempt 1 recorded pending with http_503 and the next attempt in about an hour", r)
		}
	}
	if got := attempts(rv, ds[0].ID); !slices.Equal(got, []int{1}) {
		t.Fatalf("attempts %v, want [1]", got)
	}
	visible, inFlight, delayed := queueCounts(t, e)
	if inFlight != 0 || visible+delayed != 10 {
		t.Fatalf("queue: %d visible, %d in flight, %d delayed; want the 10 retries waiting, none in flight", visible, inFlight, delayed)
	}
	if n := e.webhookItem(t, w)["failed_attempts"]; n == nil || n.(*types.AttributeValueMemberN).Value != "10" {
		t.Fatalf("webhook failed_attempts = %v, want 10", n)
	}
}

// TestFailedRecordStillRetries: when the write of an attempt's result
// fails, its retry is queued all the same and the next attempt carries the
// next number.
func TestFailedRecordStillRetries(t *testing.T) {
	e := newEnv(t, ms(5, 5))
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(500); return 500 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	_, ds := event(t, "lost write", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	// The first attempt's calls: reserve (UpdateItem), SendMessage, result
	// (UpdateItem, which fails), streak.
	e.st.Faults.FailWith("DynamoDB.UpdateItem", 1, 1, errors.New("injected: result write failed"))
	e.run(t, func() bool { return e.record(t, ds[0]).Status == delivery.StatusFailed && queueEmpty(t, e) })
	wantConsecutive(t, attempts(rv, ds[0].ID), 3)
	if r := e.record(t, ds[0]); r.Attempts != 3 || r.Error != "http_500" {
		t.Fatalf("record %+v, want failed after 3 attempts", r)
	}
}

// TestFailedRetrySendComesBack: when the retry's SendMessage fails, the
// attempt's message is kept; back after its visibility timeout, it finds
// the attempt recorded with no retry queued and queues it, and the second
// attempt is made once, numbered 2.
func TestFailedRetrySendComesBack(t *testing.T) {
	e := newEnv(t, ms(5))
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(500); return 500 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	_, ds := event(t, "lost send", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.st.Faults.FailWith("SQS.SendMessage", 0, 1, errors.New("injected: queue unavailable"))
	ev := e.receiveOne(t)
	if failed, _ := e.handle(t, ev); len(failed) != 1 {
		t.Fatalf("failures %v, want the message kept when its retry could not be sent", failed)
	}
	if r := e.record(t, ds[0]); r.Attempts != 1 || r.Status != delivery.StatusPending || r.NextAttemptAt.IsZero() {
		t.Fatalf("record %+v, want attempt 1 pending with a next attempt", r)
	}
	if _, err := e.st.SQS.ChangeMessageVisibility(context.Background(), &sqs.ChangeMessageVisibilityInput{QueueUrl: &e.url,
		ReceiptHandle: aws.String(ev.Records[0].ReceiptHandle), VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	e.run(t, func() bool { return e.record(t, ds[0]).Status == delivery.StatusFailed && queueEmpty(t, e) })
	time.Sleep(100 * time.Millisecond)
	if got := attempts(rv, ds[0].ID); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("attempts %v, want [1 2]", got)
	}
}

// TestWastedReceivesDoNotAdvanceSchedule (issue 18 item 3): three receives
// that make no attempt (DynamoDB fails) neither number an attempt nor
// move the schedule: the first attempt is X-Service-Attempt 1 and is
// followed by the schedule's first delay.
func TestWastedReceivesDoNotAdvanceSchedule(t *testing.T) {
	e := newEnv(t, []time.Duration{7 * time.Second, time.Hour})
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(500); return 500 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	_, ds := event(t, "wasted receives", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.st.Faults.FailWith("DynamoDB.GetItem", 0, 3, errors.New("injected: throttled"))
	for i := range 3 {
		ev := e.receiveOne(t)
		if failed, _ := e.handle(t, ev); len(failed) != 1 {
			t.Fatalf("receive %d: failures %v, want the record back (no attempt made)", i+1, failed)
		}
		// Its visibility timeout ends now rather than in 180 s.
		if _, err := e.st.SQS.ChangeMessageVisibility(context.Background(), &sqs.ChangeMessageVisibilityInput{QueueUrl: &e.url,
			ReceiptHandle: aws.String(ev.Records[0].ReceiptHandle), VisibilityTimeout: 0}); err != nil {
			t.Fatal(err)
		}
	}
	ev := e.receiveOne(t)
	if got := ev.Records[0].Attributes["ApproximateReceiveCount"]; got != "4" {
		t.Fatalf("receive count %s, want 4", got)
	}
	e.handle(t, ev)
	if got := attempts(rv, ds[0].ID); !slices.Equal(got, []int{1}) {
		t.Fatalf("attempts %v, want [1] after three wasted receives", got)
	}
	r := e.record(t, ds[0])
	if d := r.NextAttemptAt.Sub(r.LastAttemptAt); r.Attempts != 1 || r.Status != delivery.StatusPending || d < 5*time.Second || d > 9*time.Second {
		t.Fatalf("record %+v (next in %v), want attempt 1 pending, next after the first step (7 s ±20%%)", r, d)
	}
}

// TestAttemptNumbersContinueAcrossRedrive (issue 18 item 3): a delivery's
// message moved to the dead-letter queue and redriven (receive count back
// to 1) makes the attempt it carries, numbered after the recorded ones.
func TestAttemptNumbersContinueAcrossRedrive(t *testing.T) {
	e := newEnv(t, ms(5, 5, 5, 5))
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(500); return 500 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	_, ds := event(t, "redriven", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.handle(t, e.receiveOne(t))
	e.handle(t, e.receiveOne(t))
	// The message of the third attempt goes to the dead-letter queue (as
	// after maxReceiveCount receives) and is redriven: a new message with
	// the same body, receive count 1.
	dlq := e.st.Resources.Queues["DeliveryDLQ"]
	third := e.receiveOne(t).Records[0]
	move := func(from, to, body, handle string) {
		t.Helper()
		if _, err := e.st.SQS.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &to, MessageBody: &body}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.SQS.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &from, ReceiptHandle: &handle}); err != nil {
			t.Fatal(err)
		}
	}
	move(e.url, dlq, third.Body, third.ReceiptHandle)
	dead := e.receive(t, dlq)
	if len(dead.Records) != 1 {
		t.Fatalf("dead-letter queue holds %d messages, want 1", len(dead.Records))
	}
	move(dlq, e.url, dead.Records[0].Body, dead.Records[0].ReceiptHandle)
	ev := e.receiveOne(t)
	if got := ev.Records[0].Attributes["ApproximateReceiveCount"]; got != "1" {
		t.Fatalf("redriven receive count %s, want 1", got)
	}
	e.handle(t, ev)
	if got := attempts(rv, ds[0].ID); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("attempts %v, want [1 2 3]: the redriven message makes attempt 3", got)
	}
	if r := e.record(t, ds[0]); r.Attempts != 3 {
		t.Fatalf("record attempts %d, want 3", r.Attempts)
	}
}

// attemptLog is the deliverer's store, with every attempt the deliverer
// made written down as it records it (whether or not the record takes
// it): what the deliverer did, whatever a receiver saw of it.
type attemptLog struct {
	delivery.Store
	mu   sync.Mutex
	made []delivery.Attempt
}

func (l *attemptLog) RecordAttempt(ctx context.Context, a delivery.Attempt) error {
	l.mu.Lock()
	l.made = append(l.made, a)
	l.mu.Unlock()
	return l.Store.RecordAttempt(ctx, a)
}

// numbers returns the numbers of the attempts made of delivery id, in the
// order they were recorded.
func (l *attemptLog) numbers(id string) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []int
	for _, a := range l.made {
		if a.Delivery.ID == id {
			out = append(out, a.Number)
		}
	}
	return out
}

// sentLog is the deliverer's HTTP transport, with the attempt number of
// every request it sends written down before it goes out.
type sentLog struct {
	http.RoundTripper
	mu   sync.Mutex
	sent map[string][]int
}

func (l *sentLog) RoundTrip(r *http.Request) (*http.Response, error) {
	n, _ := strconv.Atoi(r.Header.Get("X-Service-Attempt"))
	l.mu.Lock()
	l.sent[r.Header.Get("X-Service-Delivery")] = append(l.sent[r.Header.Get("X-Service-Delivery")], n)
	l.mu.Unlock()
	return l.RoundTripper.RoundTrip(r)
}

// numbers returns the attempt numbers sent of delivery id, in order.
func (l *sentLog) numbers(id string) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.sent[id])
}

// TestRedeliveryRacingScheduledRetry (issue 18 item 3): an admin's
// redelivery queued while a retry is scheduled, both handled in one batch:
// every attempt number is made once, 1..n with none skipped and none made
// twice, and the record counts n. The attempts are counted as the
// deliverer sent and recorded them (the same numbers both ways), not as
// the receiver saw them: an attempt that timed out before the receiver
// answered (or logged it) is still one attempt. Run with -count=10 to see
// both orders.
func TestRedeliveryRacingScheduledRetry(t *testing.T) {
	e := newEnv(t, ms(5, 5))
	made := &attemptLog{Store: e.d.Store}
	e.d.Store = made
	sent := &sentLog{RoundTripper: e.d.Client.Transport, sent: map[string][]int{}}
	client := *e.d.Client
	client.Transport = sent
	e.d.Client = &client
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(500); return 500 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	ev, ds := event(t, "raced", w)
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
	e.handle(t, e.receiveOne(t)) // attempt 1 fails; attempt 2 is queued
	if got := made.numbers(ds[0].ID); !slices.Equal(got, []int{1}) {
		t.Fatalf("attempts made %v, want [1]", got)
	}
	r := &delivery.Redeliverer{Store: e.store.Deliveries, Queue: e.queue}
	if err := r.Redeliver(context.Background(), wsID, evs.KindOutbound, w.ID, ds[0].ID); err != nil {
		t.Fatal(err)
	}
	batch := e.receive(t, e.url)
	for len(batch.Records) < 2 {
		more := e.receive(t, e.url)
		if len(more.Records) == 0 {
			t.Fatalf("received %d messages, want the retry and the redelivery", len(batch.Records))
		}
		batch.Records = append(batch.Records, more.Records...)
	}
	e.handle(t, batch)
	e.run(t, func() bool { return e.record(t, ds[0]).Status == delivery.StatusFailed && queueEmpty(t, e) })
	got := made.numbers(ds[0].ID)
	// The redelivery takes the next number and a schedule of its own (3
	// attempts); the retry it raced makes at most its own attempt.
	if len(got) < 4 {
		t.Fatalf("attempts made %v, want at least 4: the first, then the redelivery's three", got)
	}
	wantConsecutive(t, got, len(got))
	if s := sent.numbers(ds[0].ID); !slices.Equal(slices.Sorted(slices.Values(s)), slices.Sorted(slices.Values(got))) {
		t.Fatalf("attempts sent %v, recorded %v: want the same", s, got)
	}
	if rec := e.record(t, ds[0]); rec.Attempts != len(got) || rec.Status != delivery.StatusFailed {
		t.Fatalf("record: %d attempts, %s; want %d, failed", rec.Attempts, rec.Status, len(got))
	}
}

// recQueue is the real queue, with every retry's delay written down.
type recQueue struct {
	q      delivery.Queue
	mu     sync.Mutex
	delays []time.Duration
	sent   []evs.Delivery
	last   evs.Delivery
}

func (r *recQueue) Schedule(ctx context.Context, d evs.Delivery, delay time.Duration) error {
	r.mu.Lock()
	r.delays, r.sent, r.last = append(r.delays, delay), append(r.sent, d), d
	r.mu.Unlock()
	return r.q.Schedule(ctx, d, delay)
}

// TestRetryAfterTwelveHoursWaitsOnTheQueue (issue 18 items 4 and 7): a
// DELIVERY_SCHEDULE step of 11 h with +20% jitter (13.2 h, past SQS's 12 h
// of visibility) leaves nothing in flight: the retry waits as a delayed
// message, sent again every 15 minutes or less until it is due, and the
// second attempt is made then, not before.
func TestRetryAfterTwelveHoursWaitsOnTheQueue(t *testing.T) {
	e := newEnv(t, []time.Duration{11 * time.Hour})
	var mu sync.Mutex
	clock := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	rq := &recQueue{q: e.queue}
	e.d.Now, e.d.Rand, e.d.Queue = now, func() float64 { return 0.999999 }, rq
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(500); return 500 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	_, ds := event(t, "long wait", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	first := now()
	e.handle(t, e.receiveOne(t))
	r := e.record(t, ds[0])
	due := r.NextAttemptAt
	if wait := due.Sub(first); wait < 13*time.Hour || wait > 13*time.Hour+13*time.Minute {
		t.Fatalf("next attempt in %v, want about 13.2 h", wait)
	}
	if visible, inFlight, delayed := queueCounts(t, e); inFlight != 0 || visible != 0 || delayed != 1 {
		t.Fatalf("queue: %d visible, %d in flight, %d delayed; want the retry delayed, nothing in flight", visible, inFlight, delayed)
	}
	// Time passes: each hop's message (held back for real up to 15 min)
	// is released at once, the clock moved on by its delay.
	hops := 0
	for len(rv.all()) == 1 {
		rq.mu.Lock()
		delay, msg := rq.delays[len(rq.delays)-1], rq.last
		rq.mu.Unlock()
		if delay > delivery.MaxQueueDelay {
			t.Fatalf("a message delayed %v, want at most %v", delay, delivery.MaxQueueDelay)
		}
		advance(delay)
		if err := e.queue.Schedule(context.Background(), msg, 0); err != nil {
			t.Fatal(err)
		}
		e.handle(t, e.receiveOne(t))
		if hops++; hops > 60 {
			t.Fatal("no attempt after 60 hops")
		}
	}
	if now().Before(due) {
		t.Fatalf("second attempt at %v, %v before it was due", now(), due.Sub(now()))
	}
	if want := int(due.Sub(first) / delivery.MaxQueueDelay); hops < want {
		t.Fatalf("%d hops, want at least %d", hops, want)
	}
	t.Logf("a wait of %v took %d hops", due.Sub(first), hops)
	if got := attempts(rv, ds[0].ID); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("attempts %v, want [1 2]", got)
	}
	if r := e.record(t, ds[0]); r.Attempts != 2 || r.Status != delivery.StatusFailed {
		t.Fatalf("record %+v, want failed after 2 attempts", r)
	}
}

// TestDuplicateMessagesMakeOneAttempt: a delivery queued twice (a stream
// record read twice) and its retry's message duplicated (SQS is
// at-least-once) make one attempt of each number.
func TestDuplicateMessagesMakeOneAttempt(t *testing.T) {
	e := newEnv(t, ms(5, 5))
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int {
		if n == 1 {
			w.WriteHeader(500)
			return 500
		}
		w.WriteHeader(200)
		return 200
	})
	rq := &recQueue{q: e.queue}
	e.d.Queue = rq
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	_, ds := event(t, "twice", w)
	for range 2 {
		if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
			t.Fatal(err)
		}
	}
	batch := e.receive(t, e.url)
	for len(batch.Records) < 2 {
		more := e.receive(t, e.url)
		if len(more.Records) == 0 {
			t.Fatalf("received %d messages, want the delivery twice", len(batch.Records))
		}
		batch.Records = append(batch.Records, more.Records...)
	}
	e.handle(t, batch)
	rq.mu.Lock()
	i := slices.IndexFunc(rq.sent, func(d evs.Delivery) bool { return d.Attempt == 2 })
	if i < 0 {
		t.Fatalf("messages sent %+v, want the retry of attempt 2", rq.sent)
	}
	retry := rq.sent[i]
	rq.mu.Unlock()
	if err := e.queue.Schedule(context.Background(), retry, 0); err != nil { // its duplicate
		t.Fatal(err)
	}
	e.run(t, func() bool { return e.record(t, ds[0]).Status == delivery.StatusSucceeded && queueEmpty(t, e) })
	time.Sleep(100 * time.Millisecond)
	if got := attempts(rv, ds[0].ID); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("attempts %v, want [1 2]: one attempt of each number", got)
	}
	if r := e.record(t, ds[0]); r.Attempts != 2 || r.ResponseStatus != 200 {
		t.Fatalf("record %+v, want succeeded after 2 attempts", r)
	}
}
