package relay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/pkg/dynamo"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// errOutage is an SQS outage as the relay sees it.
var errOutage = errors.New("injected: SQS unavailable")

// failureRecord is the body Lambda sends to RelayFailureQueue for a batch
// of the shard it gave up on.
func failureRecord(stream, shard, from, to string, n int) string {
	b, _ := json.Marshal(map[string]any{
		"requestContext": map[string]any{"condition": "RetryAttemptsExhausted", "approximateInvokeCount": 1001},
		"version":        "1.0",
		"DDBStreamBatchInfo": map[string]any{"streamArn": stream, "shardId": shard,
			"startSequenceNumber": from, "endSequenceNumber": to, "batchSize": n},
	})
	return string(b)
}

// putFailure puts one failure record on RelayFailureQueue.
func (w *world) putFailure(t *testing.T, body string) {
	t.Helper()
	url := w.st.Resources.Queues["RelayFailureQueue"]
	if _, err := w.st.SQS.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String(body)}); err != nil {
		t.Fatalf("put failure record: %v", err)
	}
}

// drain takes every message off queue and returns their bodies, sorted.
func (w *world) drain(t *testing.T, queue string) []string {
	t.Helper()
	ctx := context.Background()
	url := w.st.Resources.Queues[queue]
	var out []string
	for {
		got, err := w.st.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, VisibilityTimeout: 60})
		if err != nil {
			t.Fatalf("receive from %s: %v", queue, err)
		}
		if len(got.Messages) == 0 {
			sort.Strings(out)
			return out
		}
		for _, m := range got.Messages {
			out = append(out, aws.ToString(m.Body))
			if _, err := w.st.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatalf("delete from %s: %v", queue, err)
			}
		}
	}
}

// queueLength is the number of messages queue holds, visible or not.
func (w *world) queueLength(t *testing.T, queue string) string {
	t.Helper()
	url := w.st.Resources.Queues[queue]
	out, err := w.st.SQS.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatalf("queue attributes of %s: %v", queue, err)
	}
	return out.Attributes["ApproximateNumberOfMessages"] + "+" + out.Attributes["ApproximateNumberOfMessagesNotVisible"]
}

// deliveryKeys describes deliveries by what a receiver sees: delivery id,
// event id and type, webhook.
func deliveryKeys(t *testing.T, bodies []string) []string {
	t.Helper()
	var out []string
	for _, b := range bodies {
		d, err := evs.UnmarshalQueue(b)
		if err != nil {
			t.Fatalf("delivery message %q: %v", b, err)
		}
		out = append(out, fmt.Sprintf("%s %s %s %s %s", d.Kind, d.EventType, d.WebhookID, d.EventID, d.ID))
	}
	sort.Strings(out)
	return out
}

func (w *world) outboxRelay() *relay.Relay {
	return &relay.Relay{Queue: sqsqueue.New(w.st.SQS, w.st.Resources.Queues["TranslationQueue"]),
		Events:  &relay.Fanout{Store: w.store, Queue: sqsqueue.New(w.st.SQS, w.st.Resources.Queues["DeliveryQueue"])},
		Parking: w.store}
}

func (w *world) replayer() *relay.Replayer {
	q := sqsqueue.New(w.st.SQS, w.st.Resources.Queues["TranslationQueue"])
	return &relay.Replayer{Failures: sqsqueue.New(w.st.SQS, w.st.Resources.Queues["RelayFailureQueue"]), Parked: w.store,
		Relay: w.outboxRelay(), Sweep: &relay.Sweep{Store: w.store, Queue: q}}
}

// TestRelayFailureThenReplayRestoresEverything: every kind of change that
// reports an event goes through a healthy relay (what it sends is the
// reference), then through a relay whose queue is down on every call, as
// Lambda's last retry would see it: every record is a batch item failure and
// is parked. Lambda's failure record for the batch goes to
// RelayFailureQueue; the replay, with the queue back and no stream read,
// sends exactly the reference: the translation job and every event
// (message.*, room.*) to every webhook, with the same event and delivery
// ids. A second replay of the same failure record sends the same ids again,
// which receivers dedupe, and nothing else.
func TestRelayFailureThenReplayRestoresEverything(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	seedEveryEvent(t, w)
	ev := allStreamRecords(t, w)
	for i := range ev.Records {
		ev.Records[i].EventSourceArn = w.st.Resources.StreamARN
	}
	r := w.outboxRelay()
	if resp, err := r.HandleStream(ctx, ev); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("healthy relay: %+v %v, want no failures", resp, err)
	}
	wantJobs, wantDeliveries := w.drain(t, "TranslationQueue"), deliveryKeys(t, w.drain(t, "DeliveryQueue"))
	if len(wantJobs) != 1 || len(wantDeliveries) != 9 {
		t.Fatalf("healthy relay sent %d jobs and %d deliveries, want 1 and 9", len(wantJobs), len(wantDeliveries))
	}

	w.st.Faults.FailWith("SQS.SendMessageBatch", 0, 1000, errOutage)
	resp, err := r.HandleStream(ctx, ev)
	w.st.Faults.Clear()
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	if len(failed) == 0 {
		t.Fatalf("relay with the queue down reported no failure")
	}
	if got := w.queueLength(t, "TranslationQueue") + " " + w.queueLength(t, "DeliveryQueue"); got != "0+0 0+0" {
		t.Fatalf("queues after the failed relay: %s, want empty", got)
	}
	first, last := ev.Records[0].Change.SequenceNumber, ev.Records[len(ev.Records)-1].Change.SequenceNumber
	body := failureRecord(w.st.Resources.StreamARN, "shardId-local", first, last, len(ev.Records))

	for round := 1; round <= 2; round++ {
		w.putFailure(t, body)
		res, err := w.replayer().Run(ctx)
		if err != nil || res.Records != 1 || res.Replayed != 1 || res.StreamRecords != len(failed) || res.Left != 0 || res.Unparked != 0 || res.Sweep != nil {
			t.Fatalf("replay %d: got %+v %v, want the one failure record replayed with its %d parked records", round, res, err, len(failed))
		}
		jobs, deliveries := w.drain(t, "TranslationQueue"), deliveryKeys(t, w.drain(t, "DeliveryQueue"))
		if strings.Join(jobs, "\n") != strings.Join(wantJobs, "\n") {
			t.Fatalf("replay %d: translation jobs\n got %q\nwant %q", round, jobs, wantJobs)
		}
		if strings.Join(deliveries, "\n") != strings.Join(wantDeliveries, "\n") {
			t.Fatalf("replay %d: deliveries\n got %q\nwant %q", round, deliveries, wantDeliveries)
		}
		if got := w.queueLength(t, "RelayFailureQueue"); got != "0+0" {
			t.Fatalf("replay %d: failure queue holds %s, want empty", round, got)
		}
	}
}

// A relay that runs out of time still parks what it did not finish: the
// sends get the invocation's time less a reserve, and the parking the rest.
func TestRelayParksBeforeItsTimeout(t *testing.T) {
	w := newWorld(t)
	id := w.post(t, "Hello", time.Now())
	ev, _ := w.streamEvent(t)
	for i := range ev.Records {
		ev.Records[i].EventSourceArn = w.st.Resources.StreamARN
	}
	// Less time left than the reserve: no send can finish, the parking can.
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	resp, err := w.outboxRelay().HandleStream(ctx, ev)
	if err != nil || len(resp.BatchItemFailures) != 1 {
		t.Fatalf("got %+v %v, want the one record failed", resp, err)
	}
	seq := ev.Records[0].Change.SequenceNumber
	parked, err := w.store.ParkedStreamRecords(context.Background(), w.st.Resources.StreamARN, seq, seq)
	if err != nil || len(parked) != 1 {
		t.Fatalf("got %d parked records (%v), want 1", len(parked), err)
	}
	if m, ok := dynamo.MessageFromImage(parked[0].Image); !ok || m.ID != id || parked[0].EventName != "INSERT" || parked[0].Seq != seq {
		t.Fatalf("parked record %+v, want the insert of message %s", parked[0], id)
	}
}

// A failure record whose range holds no parked record (the relay could not
// park it) cannot be restored from the table: the replay runs the sweep,
// which queues the message's translation again, and keeps the failure
// record, counted as unparked.
func TestReplayOfAnUnparkedRecord(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	aged := w.post(t, "Good morning", time.Now().Add(-25*time.Hour))
	ev, shard := w.streamEvent(t)
	seq := ev.Records[0].Change.SequenceNumber
	w.putFailure(t, failureRecord(w.st.Resources.StreamARN, shard, seq, seq, 1))
	res, err := w.replayer().Run(ctx)
	if err != nil || res.Records != 1 || res.Unparked != 1 || res.Replayed != 0 || res.Sweep == nil || res.Sweep.Requeued != 1 {
		t.Fatalf("got %+v %v, want one unparked record and a sweep that re-queued one message", res, err)
	}
	jobs := w.drain(t, "TranslationQueue")
	if len(jobs) != 1 {
		t.Fatalf("got %d jobs, want 1", len(jobs))
	}
	if job, err := messages.DecodeJob(jobs[0]); err != nil || job.MessageID != aged {
		t.Fatalf("job %+v %v, want message %s", job, err, aged)
	}
	if got := w.queueLength(t, "RelayFailureQueue"); got != "0+1" {
		t.Fatalf("failure queue holds %s, want the unparked record kept (in flight)", got)
	}
}

// TestReplayNeedsTheFanout: a replay without the event fan-out would lose
// the records' events; it refuses to run.
func TestReplayNeedsTheFanout(t *testing.T) {
	rp := &relay.Replayer{Relay: &relay.Relay{}}
	if _, err := rp.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "fan-out") {
		t.Fatalf("got %v, want an error naming the fan-out", err)
	}
}
