package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/delivery/attempt"
	"github.com/chatbridge/chat/pkg/netguard"
)

// TestTimeoutShowsInTheLog is the red team's receiver that answers after
// the timeout (here 1 s, standing for the contract's 10 s, with a first
// retry step of 100 ms standing for its 5 s): each attempt is in the
// delivery log as pending with error "timeout", attempts counted, and a
// next_attempt_at after the attempt failed. Before, the schedule's delay
// ran from the attempt's start, so a step shorter than the timeout was due
// before the attempt ended: its retry went out at once (next_attempt_at
// already past when written) and its reservation replaced the timeout with
// a pending attempt whose error is null.
func TestTimeoutShowsInTheLog(t *testing.T) {
	w := newEventWorld(t, "100ms,1h")
	w.d.Timeout = time.Second
	w.rv.setAnswer(func(delivered) int {
		time.Sleep(1500 * time.Millisecond) // past the timeout
		return http.StatusNoContent
	})
	id := w.post(t, bearer(w.ben), "slow receiver")
	w.relayStream(t)

	type logged struct {
		ID, Status    string
		Attempts      int
		Error         *string
		NextAttemptAt *string `json:"next_attempt_at"`
		LastAttemptAt *string `json:"last_attempt_at"`
		EventType     string  `json:"event_type"`
	}
	logOf := func() logged {
		t.Helper()
		rec := w.do(t, "GET", w.wsPath("/outbound-webhooks/"+w.out+"/deliveries"), "", bearer(w.ben))
		if rec.Code != 200 {
			t.Fatalf("log: %d %s", rec.Code, rec.Body)
		}
		page := decodeAs[pageOf[logged]](t, rec.Body.Bytes())
		if len(page.Data) != 1 {
			t.Fatalf("log %s, want one delivery (message.created of %s)", rec.Body, id)
		}
		return page.Data[0]
	}
	for n, lane := range []string{"DeliveryQueue", "SlowDeliveryQueue"} {
		w.attemptOne(t, lane)
		l := logOf()
		if l.Status != delivery.StatusPending || l.Attempts != n+1 || l.Error == nil || *l.Error != attempt.ErrTimeout ||
			l.NextAttemptAt == nil || l.LastAttemptAt == nil {
			t.Fatalf("after attempt %d the log shows %+v (error %v), want pending, %d attempts, error timeout and next_attempt_at set",
				n+1, l, l.Error, n+1)
		}
		r, err := storetest.New(w.app.DB, w.app.Table).Deliveries.Delivery(context.Background(), w.ws.ID, w.out, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		failed := r.LastAttemptAt.Add(time.Duration(r.DurationMS) * time.Millisecond)
		if r.DurationMS < 1000 || !r.NextAttemptAt.After(failed) {
			t.Fatalf("attempt %d: began %v, failed %v after, next attempt at %v; want the next attempt after the failure",
				n+1, r.LastAttemptAt, time.Duration(r.DurationMS)*time.Millisecond, r.NextAttemptAt)
		}
	}
	if n := len(w.rv.of("/out", "slow receiver")); n != 2 {
		t.Fatalf("the receiver got %d attempts, want 2", n)
	}
}

// attemptOne receives one message from lane (waiting for it) and hands it
// to the delivery function alone.
func (w *eventWorld) attemptOne(t *testing.T, lane string) {
	t.Helper()
	ctx := context.Background()
	q := sqs.NewFromConfig(w.st.As(delivering.Function))
	url := w.st.Resources.Queues[lane]
	var msg sqstypes.Message
	for deadline := time.Now().Add(10 * time.Second); ; {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 1, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 1 {
			msg = out.Messages[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no message on %s within 10 s", lane)
		}
	}
	resp, err := w.d.HandleSQS(ctx, lambdaevents.SQSEvent{Records: []lambdaevents.SQSMessage{{MessageId: aws.ToString(msg.MessageId),
		Body: aws.ToString(msg.Body), Attributes: msg.Attributes, EventSourceARN: w.st.Resources.QueueARNs[lane]}}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("delivery function: %+v %v", resp, err)
	}
	if _, err := q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: msg.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
}

// TestDeliveryTimeoutsNest holds the order the delivery function's
// timeouts rely on: an attempt (10 s) and its writes fit the function's
// Timeout; a reserved attempt number's lease outlives the function, so a
// number is never taken over while its attempt may still run; and the
// queues' visibility timeout outlives the lease, so a message whose
// function died comes back to a number it can take over.
func TestDeliveryTimeoutsNest(t *testing.T) {
	tmpl, err := samtemplate.Project()
	if err != nil {
		t.Fatal(err)
	}
	fn := tmpl.Timeout(delivering.Function)
	if fn < netguard.Timeout+5*time.Second {
		t.Errorf("%s Timeout %v: want at least the attempt's %v and 5 s for its writes", delivering.Function, fn, netguard.Timeout)
	}
	if attempt.DefaultLease <= fn {
		t.Errorf("lease %v: want longer than the function's Timeout %v", attempt.DefaultLease, fn)
	}
	for _, q := range []string{"DeliveryQueue", "SlowDeliveryQueue"} {
		v, _ := tmpl.Resources[q].Properties["VisibilityTimeout"].(int)
		if time.Duration(v)*time.Second <= attempt.DefaultLease {
			t.Errorf("%s VisibilityTimeout %d s: want longer than the lease %v", q, v, attempt.DefaultLease)
		}
	}
}
