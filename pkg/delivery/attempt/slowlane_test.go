package attempt_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/delivery"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// streak is a webhook item's failure streak: n failed attempts since an
// hour ago.
func streak(n string) map[string]types.AttributeValue {
	since := time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.000000000Z")
	return map[string]types.AttributeValue{"failing_since": &types.AttributeValueMemberS{Value: since},
		"failed_attempts": &types.AttributeValueMemberN{Value: n}}
}

// wantCalls fails unless got is want, in order.
func wantCalls(t *testing.T, step string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: calls %v, want %v", step, got, want)
	}
}

// wantCounts fails unless the queue at url holds visible, in-flight and
// delayed messages as wanted.
func wantCounts(t *testing.T, e *env, name, url string, visible, inFlight, delayed int) {
	t.Helper()
	v, f, d := queueCountsAt(t, e, url)
	if v != visible || f != inFlight || d != delayed {
		t.Fatalf("%s: %d visible, %d in flight, %d delayed; want %d, %d, %d", name, v, f, d, visible, inFlight, delayed)
	}
}

// TestStreakMovesToSlowLane: a delivery read from the delivery queue whose
// webhook has a failure streak is moved to the slow lane as it is (the
// webhook's GetItem and one SendMessage): nothing is sent, no attempt
// number is taken, no failure is counted. On the slow lane it is attempted
// (attempt 1) although the streak still holds; the success ends the streak,
// and the webhook's next delivery goes ahead on the delivery queue.
func TestStreakMovesToSlowLane(t *testing.T) {
	e := newLanesEnv(t, ms(5, 5, 5))
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(200); return 200 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, streak("3"))
	_, ds := event(t, "to a failing webhook", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	fast := e.receiveOne(t)
	e.st.Calls.Reset()
	failed, calls := e.handle(t, fast)
	if len(failed) != 0 {
		t.Fatalf("move: batch item failures %v, want none", failed)
	}
	wantCalls(t, "move", calls, "DynamoDB.GetItem", "SQS.SendMessage")
	if n := len(rv.all()); n != 0 {
		t.Fatalf("receiver got %d requests before the move, want 0", n)
	}
	if r := e.record(t, ds[0]); r.ID != "" || r.Attempts != 0 {
		t.Fatalf("moved delivery has a record %+v, want none (no attempt number taken)", r)
	}
	if n := e.webhookItem(t, w)["failed_attempts"].(*types.AttributeValueMemberN).Value; n != "3" {
		t.Fatalf("webhook failed_attempts = %s after the move, want 3 (nothing counted)", n)
	}
	wantCounts(t, e, "delivery queue after the move", e.url, 0, 0, 0)
	slow := e.receive(t, e.slowURL)
	if len(slow.Records) != 1 {
		t.Fatalf("slow lane holds %d messages, want the moved one", len(slow.Records))
	}
	if slow.Records[0].Body != fast.Records[0].Body {
		t.Fatalf("moved message %s, want the received one unchanged: %s", slow.Records[0].Body, fast.Records[0].Body)
	}
	e.st.Calls.Reset()
	if failed, calls = e.handle(t, slow); len(failed) != 0 {
		t.Fatalf("slow lane: batch item failures %v, want none", failed)
	}
	// The success ends the streak: one UpdateItem more, once per streak.
	wantCalls(t, "attempt on the slow lane", calls, "DynamoDB.GetItem", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem")
	if got := attempts(rv, ds[0].ID); !slices.Equal(got, []int{1}) {
		t.Fatalf("attempt numbers %v, want [1]", got)
	}
	if r := e.record(t, ds[0]); r.Status != delivery.StatusSucceeded || r.Attempts != 1 {
		t.Fatalf("record %+v, want succeeded after 1 attempt", r)
	}
	if it := e.webhookItem(t, w); it["failed_attempts"] != nil || it["failing_since"] != nil {
		t.Fatalf("streak not ended: failed_attempts %v", it["failed_attempts"])
	}
	// The streak ended: the next delivery goes ahead where it is.
	_, ds = event(t, "after the streak", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	ev := e.receiveOne(t)
	e.st.Calls.Reset()
	_, calls = e.handle(t, ev)
	wantCalls(t, "attempt on the delivery queue", calls, "DynamoDB.GetItem", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem")
	if r := e.record(t, ds[0]); r.Status != delivery.StatusSucceeded {
		t.Fatalf("record %+v, want succeeded", r)
	}
	wantCounts(t, e, "slow lane at the end", e.slowURL, 0, 0, 0)
}

// TestRetriesWaitOnSlowLane: a failed attempt on the delivery queue sends
// its retry to the slow lane (the calls of TestAttemptCallBudget, the
// SendMessage to the other queue); a retry received there before its due
// time waits there again; it is attempted there when due.
func TestRetriesWaitOnSlowLane(t *testing.T) {
	e := newLanesEnv(t, ms(5, 5))
	rv, ds := e.queueFailingOnce(t)
	ev := e.receiveOne(t)
	e.st.Calls.Reset()
	_, calls := e.handle(t, ev)
	wantCalls(t, "failed attempt", calls, "DynamoDB.GetItem", "DynamoDB.UpdateItem", "SQS.SendMessage", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem")
	wantCounts(t, e, "delivery queue after the failure", e.url, 0, 0, 0)
	retry := e.receive(t, e.slowURL)
	if len(retry.Records) != 1 {
		t.Fatalf("slow lane holds %d messages, want the retry", len(retry.Records))
	}
	d, err := evs.UnmarshalQueue(retry.Records[0].Body)
	if err != nil || d.ID != ds[0].ID || d.Attempt != 2 {
		t.Fatalf("retry %+v (%v), want delivery %s attempt 2", d, err, ds[0].ID)
	}
	// Seen early, the retry waits on its own lane.
	early := d
	early.Due = time.Now().Add(time.Hour)
	if err := e.d.Slow.Schedule(context.Background(), early, 0); err != nil {
		t.Fatal(err)
	}
	e.st.Calls.Reset()
	_, calls = e.handle(t, retry)
	wantCalls(t, "retry on the slow lane", calls, "DynamoDB.GetItem", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem")
	ev = e.receive(t, e.slowURL)
	if len(ev.Records) != 1 {
		t.Fatalf("slow lane holds %d messages, want the early copy", len(ev.Records))
	}
	e.st.Calls.Reset()
	_, calls = e.handle(t, ev)
	wantCalls(t, "early message", calls, "SQS.SendMessage")
	wantCounts(t, e, "slow lane after the early message", e.slowURL, 0, 0, 1)
	wantCounts(t, e, "delivery queue at the end", e.url, 0, 0, 0)
	if got := attempts(rv, ds[0].ID); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("attempt numbers %v, want [1 2]", got)
	}
	if r := e.record(t, ds[0]); r.Status != delivery.StatusSucceeded || r.Attempts != 2 {
		t.Fatalf("record %+v, want succeeded after 2 attempts", r)
	}
}

// TestFailedMoveComesBack: when the move's SendMessage fails, the message
// is a batch item failure, left on the delivery queue (never dropped), and
// moved when it comes back.
func TestFailedMoveComesBack(t *testing.T) {
	e := newLanesEnv(t, ms(5))
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int { w.WriteHeader(200); return 200 })
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, streak("1"))
	_, ds := event(t, "move fails", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	ev := e.receiveOne(t)
	e.st.Faults.Fail("SQS.SendMessage", 0, stacktest.Before)
	failed, _ := e.handle(t, ev)
	e.st.Faults.Clear()
	if !slices.Equal(failed, []string{ev.Records[0].MessageId}) {
		t.Fatalf("batch item failures %v, want the record whose move failed", failed)
	}
	wantCounts(t, e, "delivery queue after the failed move", e.url, 0, 1, 0)
	wantCounts(t, e, "slow lane after the failed move", e.slowURL, 0, 0, 0)
	// Its visibility timeout (180 s) ends now.
	if _, err := e.st.SQS.ChangeMessageVisibility(context.Background(), &sqs.ChangeMessageVisibilityInput{QueueUrl: &e.url,
		ReceiptHandle: &ev.Records[0].ReceiptHandle, VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	ev = e.receiveOne(t)
	e.st.Calls.Reset()
	_, calls := e.handle(t, ev)
	wantCalls(t, "second receive", calls, "DynamoDB.GetItem", "SQS.SendMessage")
	e.st.Calls.Reset()
	e.run(t, func() bool { return e.record(t, ds[0]).Status == delivery.StatusSucceeded && queueEmpty(t, e) })
	if got := attempts(rv, ds[0].ID); !slices.Equal(got, []int{1}) {
		t.Fatalf("attempt numbers %v, want [1]", got)
	}
	if n := strings.Count(strings.Join(e.st.Calls.Calls(), ","), "SQS.SendMessage"); n != 0 {
		t.Fatalf("%d SendMessage on the slow lane's attempt, want 0", n)
	}
}

// TestSlowAttemptMarksWebhook: an attempt still waiting after SlowAfter
// marks its webhook (one UpdateItem, while the request goes on with its
// whole timeout), so that the webhook's next delivery read from the
// delivery queue meanwhile is moved to the slow lane without waiting for
// the timeout; the attempt's success clears the mark (one UpdateItem).
func TestSlowAttemptMarksWebhook(t *testing.T) {
	e := newLanesEnv(t, ms(5))
	e.d.Marker, e.d.SlowAfter, e.d.Client.Timeout = e.store.Deliveries, 100*time.Millisecond, 3*time.Second
	release := make(chan struct{})
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int {
		switch n {
		case 1:
			time.Sleep(300 * time.Millisecond) // slow, but a success
		case 2:
			select { // held until the test has seen the mark
			case <-release:
			case <-time.After(2 * time.Second):
			}
		}
		w.WriteHeader(200)
		return 200
	})
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	send := func(content string) evs.Delivery {
		t.Helper()
		_, ds := event(t, content, w)
		if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
			t.Fatal(err)
		}
		return ds[0]
	}
	a := send("slow success")
	ev := e.receiveOne(t)
	e.st.Calls.Reset()
	_, calls := e.handle(t, ev)
	wantCalls(t, "slow success", calls, "DynamoDB.GetItem", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem", "DynamoDB.UpdateItem")
	if r := e.record(t, a); r.Status != delivery.StatusSucceeded {
		t.Fatalf("record %+v, want succeeded", r)
	}
	if it := e.webhookItem(t, w); it["slow_since"] != nil || it["failed_attempts"] != nil {
		t.Fatalf("webhook slow_since %v failed_attempts %v after a success, want neither", it["slow_since"], it["failed_attempts"])
	}

	b := send("held")
	held := e.receiveOne(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = e.d.HandleSQS(context.Background(), held)
	}()
	for deadline := time.Now().Add(2 * time.Second); e.webhookItem(t, w)["slow_since"] == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the waiting attempt did not mark its webhook within 2 s")
		}
	}
	c := send("while the first waits")
	ev = e.receiveOne(t)
	if failed, _ := e.handle(t, ev); len(failed) != 0 {
		t.Fatalf("batch item failures %v, want none", failed)
	}
	moved := e.receive(t, e.slowURL)
	if len(moved.Records) != 1 {
		t.Fatalf("slow lane holds %d messages, want the delivery moved while the webhook was marked", len(moved.Records))
	}
	if d, err := evs.UnmarshalQueue(moved.Records[0].Body); err != nil || d.ID != c.ID || d.Attempt != 0 {
		t.Fatalf("moved %+v (%v), want delivery %s unattempted", d, err, c.ID)
	}
	if r := e.record(t, c); r.ID != "" {
		t.Fatalf("moved delivery has a record %+v, want none", r)
	}
	close(release)
	<-done
	if _, err := e.st.SQS.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &e.url, ReceiptHandle: &held.Records[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	if r := e.record(t, b); r.Status != delivery.StatusSucceeded || r.Attempts != 1 {
		t.Fatalf("held delivery %+v, want succeeded after 1 attempt (the mark does not shorten it)", r)
	}
	if it := e.webhookItem(t, w); it["slow_since"] != nil {
		t.Fatalf("webhook slow_since %v after the held attempt succeeded, want cleared", it["slow_since"])
	}
	if got := attempts(rv, c.ID); len(got) != 0 {
		t.Fatalf("the moved delivery was sent %v on the delivery queue, want not at all", got)
	}
}

// TestWaitingRetriesTakeNoLane: with a wait lane, a failed attempt's retry
// waits there, not on the slow lane; a copy received early waits again
// there (one SendMessage, nothing read or attempted); once due it goes on
// to the slow lane as it is (one SendMessage), where it is attempted. So
// however many retries wait, their 15-minute hops never take a slot of the
// slow lane's attempts (before, every hop of every waiting retry was
// handled in the slow lane's 5 × 10 slots, beside attempts timing out
// after 10 s).
func TestWaitingRetriesTakeNoLane(t *testing.T) {
	e := newLanesEnv(t, ms(2000, 2000))
	waitURL := e.st.Resources.Queues["DeliveryWaitQueue"]
	e.d.Wait = sqsqueue.New(e.st.SQS, waitURL)
	e.d.LaneOf = delivering.Lanes(delivering.Queues{Fast: e.url, Slow: e.slowURL, Wait: waitURL})
	rv, ds := e.queueFailingOnce(t)
	e.handle(t, e.receiveOne(t))
	wantCounts(t, e, "slow lane after the failure", e.slowURL, 0, 0, 0)
	wantCounts(t, e, "wait lane after the failure", waitURL, 0, 0, 1)

	// A copy seen early waits again on the wait lane, and costs nothing else.
	early := ds[0]
	early.Attempt, early.Due = 2, time.Now().Add(time.Hour)
	if err := e.d.Wait.Schedule(context.Background(), early, 0); err != nil {
		t.Fatal(err)
	}
	ev := e.receive(t, waitURL)
	if len(ev.Records) != 1 {
		t.Fatalf("wait lane shows %d messages, want the early copy", len(ev.Records))
	}
	e.st.Calls.Reset()
	_, calls := e.handle(t, ev)
	wantCalls(t, "early copy on the wait lane", calls, "SQS.SendMessage")
	wantCounts(t, e, "wait lane after the early copy", waitURL, 0, 0, 2)

	// The retry, once due, goes on to the slow lane unattempted.
	var due events.SQSEvent
	for deadline := time.Now().Add(10 * time.Second); len(due.Records) == 0 && time.Now().Before(deadline); {
		due = e.receive(t, waitURL)
	}
	if len(due.Records) != 1 {
		t.Fatalf("wait lane gave %d messages once the retry was due, want 1", len(due.Records))
	}
	e.st.Calls.Reset()
	_, calls = e.handle(t, due)
	wantCalls(t, "due retry on the wait lane", calls, "SQS.SendMessage")
	if got := attempts(rv, ds[0].ID); !slices.Equal(got, []int{1}) {
		t.Fatalf("attempt numbers %v after the wait lane, want [1]: nothing is attempted there", got)
	}
	retry := e.receive(t, e.slowURL)
	if len(retry.Records) != 1 {
		t.Fatalf("slow lane holds %d messages, want the due retry", len(retry.Records))
	}
	e.handle(t, retry)
	if got := attempts(rv, ds[0].ID); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("attempt numbers %v, want [1 2]", got)
	}
	if r := e.record(t, ds[0]); r.Status != delivery.StatusSucceeded || r.Attempts != 2 {
		t.Fatalf("record %+v, want succeeded after 2 attempts", r)
	}
}

// queueFailingOnce queues, on the delivery queue, one event's delivery to a
// webhook whose receiver answers 500 to its first attempt and 200 after.
func (e *env) queueFailingOnce(t *testing.T) (*receiver, []evs.Delivery) {
	t.Helper()
	rv := newReceiver(t, func(n int, w http.ResponseWriter) int {
		if n == 1 {
			w.WriteHeader(500)
			return 500
		}
		w.WriteHeader(200)
		return 200
	})
	w := e.putWebhook(t, evs.KindOutbound, "01JD9N15ZR836GD73VZ533YQJJ", rv.URL, nil)
	_, ds := event(t, "fails once", w)
	if _, err := e.queue.SendDeliveries(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	return rv, ds
}
