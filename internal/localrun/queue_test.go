package localrun_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/internal/stacktest"
)

// queueRig is a queue with a one-second visibility timeout, so that
// messages left by a failed invocation come back within the test.
type queueRig struct {
	st       *stacktest.Stack
	url, arn string
	mu       sync.Mutex
	batches  [][]string // bodies, with the receive count: "a/1"
}

func newQueueRig(t *testing.T, bodies ...string) *queueRig {
	t.Helper()
	st := stacktest.New(t)
	ctx := context.Background()
	out, err := st.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(st.Table + "-q"), Attributes: map[string]string{"VisibilityTimeout": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	r := &queueRig{st: st, url: aws.ToString(out.QueueUrl)}
	if r.arn, err = localrun.QueueARN(ctx, st.SQS, r.url); err != nil {
		t.Fatal(err)
	}
	for _, b := range bodies {
		if _, err := st.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &r.url, MessageBody: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func (r *queueRig) record(ev events.SQSEvent) {
	var b []string
	for _, m := range ev.Records {
		b = append(b, m.Body+"/"+m.Attributes["ApproximateReceiveCount"])
	}
	sort.Strings(b)
	r.mu.Lock()
	r.batches = append(r.batches, b)
	r.mu.Unlock()
}

// handled is every body with its receive count, in the order handled.
func (r *queueRig) handled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var all []string
	for _, b := range r.batches {
		all = append(all, b...)
	}
	return all
}

// run runs m until cond holds (or 15 s), and 300 ms more for the
// mapping's deletes.
func (r *queueRig) run(t *testing.T, m *localrun.QueueMapping, cond func() bool) {
	t.Helper()
	m.SQS, m.QueueURL, m.QueueARN = r.st.SQS, r.url, r.arn
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("handled %v: the condition never held", r.handled())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	cancel()
	<-done
}

func (r *queueRig) left(t *testing.T) int {
	t.Helper()
	out, err := r.st.SQS.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &r.url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	var n, m int
	if _, err := fmt.Sscan(out.Attributes["ApproximateNumberOfMessages"], &n); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(out.Attributes["ApproximateNumberOfMessagesNotVisible"], &m); err != nil {
		t.Fatal(err)
	}
	return n + m
}

// TestQueueTimeoutLeavesTheBatch: an invocation that overruns the
// function's Timeout deletes nothing (even though the handler returns
// success later): the batch comes back after the visibility timeout and is
// handled then, once; batches hold at most BatchSize messages; the handler
// sees Lambda's deadline and context.
func TestQueueTimeoutLeavesTheBatch(t *testing.T) {
	r := newQueueRig(t, "a", "b", "c")
	var once sync.Once
	m := &localrun.QueueMapping{
		Function: localrun.Function{Name: "SlowConsumer", Timeout: 300 * time.Millisecond},
		Source:   samtemplate.EventSource{Type: "SQS", BatchSize: 2, ReportBatchItemFailures: true},
		Handler: func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			r.record(ev)
			deadline, ok := ctx.Deadline()
			if lc, lok := lambdacontext.FromContext(ctx); !ok || !lok || lc.AwsRequestID == "" || time.Until(deadline) > 300*time.Millisecond {
				t.Errorf("handler context: deadline %v (%v), lambda context %v; want both, within the Timeout", deadline, ok, lok)
			}
			slow := false
			once.Do(func() { slow = true })
			if slow {
				<-ctx.Done()
				time.Sleep(50 * time.Millisecond)
			}
			return events.SQSEventResponse{}, nil
		},
	}
	r.run(t, m, func() bool { return len(r.handled()) >= 5 })
	r.mu.Lock()
	first, batches := r.batches[0], fmt.Sprint(r.batches)
	r.mu.Unlock()
	for _, b := range r.batches {
		if len(b) > 2 {
			t.Fatalf("batches %s, want at most 2 messages each", batches)
		}
	}
	// The timed-out batch's messages were received a second time.
	for _, body := range first {
		again := strings.TrimSuffix(body, "/1") + "/2"
		if !contains(r.handled(), again) {
			t.Fatalf("batches %s: %s of the timed-out batch was not received again", batches, body)
		}
	}
	if n := r.left(t); n != 0 {
		t.Fatalf("%d messages left on the queue, want 0 (batches %s)", n, batches)
	}
}

// TestQueuePartialFailure: only the reported message stays on the queue
// and comes back; a response naming a message not in the batch fails it
// whole.
func TestQueuePartialFailure(t *testing.T) {
	r := newQueueRig(t, "ok", "fail")
	m := &localrun.QueueMapping{
		Function: localrun.Function{Name: "PartialConsumer", Timeout: 5 * time.Second},
		Source:   samtemplate.EventSource{Type: "SQS", BatchSize: 10, BatchingWindow: 500 * time.Millisecond, ReportBatchItemFailures: true},
		Handler: func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			r.record(ev)
			var resp events.SQSEventResponse
			for _, msg := range ev.Records {
				switch count := msg.Attributes["ApproximateReceiveCount"]; {
				case msg.Body == "fail" && count == "1":
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: msg.MessageId})
				case msg.Body == "fail" && count == "2":
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: "unknown"})
				}
			}
			return resp, nil
		},
	}
	r.run(t, m, func() bool { return contains(r.handled(), "fail/3") })
	got := fmt.Sprint(r.handled())
	if got != "[fail/1 ok/1 fail/2 fail/3]" {
		t.Fatalf("handled %s, want [fail/1 ok/1 fail/2 fail/3]", got)
	}
	if n := r.left(t); n != 0 {
		t.Fatalf("%d messages left on the queue, want 0", n)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// TestQueueMappingsReadEveryLane: the delivery function has an SQS event
// on each lane; NewQueueMappings gives a running mapping on each queue,
// with the event's own settings, and a message sent to either reaches the
// handler with its queue's ARN as eventSourceARN.
func TestQueueMappingsReadEveryLane(t *testing.T) {
	st := stacktest.New(t)
	tmpl := template(t)
	var (
		mu  sync.Mutex
		got = map[string]string{} // body -> eventSourceARN
	)
	h := func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range ev.Records {
			got[r.Body] = r.EventSourceARN
		}
		return events.SQSEventResponse{}, nil
	}
	ms, err := localrun.NewQueueMappings(tmpl, "DeliverWebhooksFunction", st.SQS, st.Resources, h)
	if err != nil {
		t.Fatal(err)
	}
	var lanes []string
	for _, m := range ms {
		lanes = append(lanes, fmt.Sprintf("%s %d", m.Source.Source, m.Source.MaximumConcurrency))
	}
	if want := "[DeliveryQueue 100 SlowDeliveryQueue 5 DeliveryWaitQueue 5]"; fmt.Sprint(lanes) != want {
		t.Fatalf("mappings %v, want %s", lanes, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Go(func() { _ = m.Run(ctx) })
	}
	defer func() { cancel(); wg.Wait() }()
	lanesQ := []string{"DeliveryQueue", "SlowDeliveryQueue", "DeliveryWaitQueue"}
	for _, q := range lanesQ {
		if _, err := st.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(st.Resources.Queues[q]), MessageBody: aws.String(q)}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == len(lanesQ) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, q := range lanesQ {
		if got[q] != st.Resources.QueueARNs[q] {
			t.Errorf("message sent to %s reached the handler from %q, want %s", q, got[q], st.Resources.QueueARNs[q])
		}
	}
	if _, err := localrun.NewQueueMappings(tmpl, "JoinRoomFunction", st.SQS, st.Resources, h); err == nil {
		t.Errorf("JoinRoomFunction has no SQS event: got no error")
	}
}
