package relay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
	"github.com/chatbridge/chat/pkg/sqsqueue/failurequeue"
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
func (w *world) queueLength(t testing.TB, queue string) string {
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
		Events:  &relay.Fanout{Store: w.store.Relay, Queue: sqsqueue.New(w.st.SQS, w.st.Resources.Queues["DeliveryQueue"])},
		Parking: w.store.Relay}
}

func (w *world) replayer() *relay.Replayer {
	q := sqsqueue.New(w.st.SQS, w.st.Resources.Queues["TranslationQueue"])
	return &relay.Replayer{Failures: failurequeue.New(w.st.SQS, w.st.Resources.Queues["RelayFailureQueue"]), Parked: w.store.Relay,
		Relay: w.outboxRelay(), Sweep: &relay.Sweep{Store: w.store.Translation, Queue: q}}
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
	parked, err := w.store.Relay.ParkedStreamRecords(context.Background(), w.st.Resources.StreamARN, seq, seq)
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

// consume receives and deletes queue's messages until ctx ends, counting them.
func (w *world) consume(ctx context.Context, queue string) *atomic.Int64 {
	url := w.st.Resources.Queues[queue]
	var n atomic.Int64
	go func() {
		for ctx.Err() == nil {
			out, err := w.st.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, VisibilityTimeout: 300})
			if err != nil || len(out.Messages) == 0 {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			var del []sqstypes.DeleteMessageBatchRequestEntry
			for i, m := range out.Messages {
				del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: m.ReceiptHandle})
			}
			if _, err := w.st.SQS.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: del}); err == nil {
				n.Add(int64(len(out.Messages)))
			}
		}
	}()
	return &n
}

// BenchmarkReplay10000 measures the replay of 10,000 failed records against
// moto: 100 failure records (Lambda's batch of 100), each naming 100 parked
// message inserts of one workspace whose one outbound webhook subscribes to
// message.created, so each record costs a translation job, an event
// envelope and a delivery. Consumers drain both queues meanwhile, as the
// functions would. It reports the replay's time and rate (setup excluded)
// and checks that every job and delivery was sent, once.
func BenchmarkReplay10000(b *testing.B) {
	const records, batch = 10000, 100
	for range b.N {
		b.StopTimer()
		w := &world{st: stacktest.New(b), channel: ids.New(time.Now())}
		w.store = storetest.New(w.st.DB, w.st.Table)
		stream := w.st.Resources.StreamARN
		ctx := context.Background()
		now := time.Now().UTC()
		ws := ids.New(now)
		hook, err := attributevalue.MarshalMap(map[string]any{"pk": "WS#" + ws, "sk": "OWH#2026-01-01T00:00:00.000000000Z#" + ids.New(now),
			"id": ids.New(now), "active": true, "url": "https://out.example.invalid/", "signing_secret": "s", "events": []string{evs.MessageCreated}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.st.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &w.st.Table, Item: hook}); err != nil {
			b.Fatal(err)
		}
		// One real message item is the template of every parked image.
		m := chat.Message{ID: ids.New(now), WorkspaceID: ws, ChannelID: w.channel, Author: chat.Author{Type: chat.AuthorBot, Name: "CI Bot"},
			Content: "Deploy finished", SourceLanguage: "en", Status: chat.MessageQueued, CreatedAt: now}
		if err := w.store.PutMessage(ctx, m); err != nil {
			b.Fatal(err)
		}
		got, err := w.st.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &w.st.Table, Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "CHAN#" + w.channel}, "sk": &types.AttributeValueMemberS{Value: "MSG#" + m.ID}}})
		if err != nil || got.Item == nil {
			b.Fatalf("read the message back: %v", err)
		}
		recs := make([]dynamo.StreamRecord, records)
		for i := range recs {
			image := maps.Clone(got.Item)
			id := ids.New(now)
			image["id"], image["sk"] = &types.AttributeValueMemberS{Value: id}, &types.AttributeValueMemberS{Value: "MSG#" + id}
			recs[i] = dynamo.StreamRecord{Seq: fmt.Sprintf("1%020d", i), EventName: "INSERT", At: now, Image: image}
		}
		if err := w.store.Relay.ParkStreamRecords(ctx, stream, recs, now); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < records; i += batch {
			body := failureRecord(stream, "shardId-local", recs[i].Seq, recs[i+batch-1].Seq, batch)
			url := w.st.Resources.Queues["RelayFailureQueue"]
			if _, err := w.st.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String(body)}); err != nil {
				b.Fatal(err)
			}
		}
		w.st.Calls.Reset()
		// Consumers keep the queues short, as the translation and delivery
		// functions do: moto's SendMessage slows with the queue's length.
		drainCtx, stopDrain := context.WithCancel(ctx)
		jobs, deliveries := w.consume(drainCtx, "TranslationQueue"), w.consume(drainCtx, "DeliveryQueue")
		b.StartTimer()
		start := time.Now()
		res, err := w.replayer().Run(ctx)
		elapsed := time.Since(start)
		b.StopTimer()
		calls := w.st.Calls.Total()
		if err != nil || res.Replayed != records/batch || res.StreamRecords != records {
			b.Fatalf("replay: %+v %v, want %d failure records and %d stream records replayed", res, err, records/batch, records)
		}
		for deadline := time.Now().Add(5 * time.Minute); (jobs.Load() < records || deliveries.Load() < records) && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
		stopDrain()
		if jobs.Load() != records || deliveries.Load() != records {
			b.Fatalf("consumed %d jobs and %d deliveries, want %d of each", jobs.Load(), deliveries.Load(), records)
		}
		b.ReportMetric(elapsed.Seconds(), "s/replay")
		b.ReportMetric(float64(records)/elapsed.Seconds(), "records/s")
		b.Logf("replayed %d records (%d failure records) in %s; %d AWS calls, the consumers' included", records, records/batch, elapsed.Round(time.Millisecond), calls)
		b.StartTimer()
	}
}

// countingParking is a Parking counting the records it is asked to park.
type countingParking struct {
	relay.Parking
	mu     sync.Mutex
	parked int
}

func (c *countingParking) ParkStreamRecords(ctx context.Context, stream string, recs []dynamo.StreamRecord, now time.Time) error {
	c.mu.Lock()
	c.parked += len(recs)
	c.mu.Unlock()
	return c.Parking.ParkStreamRecords(ctx, stream, recs, now)
}

// TestRelayParksEachRecordOnce: a batch that keeps failing (Lambda retries
// it, here three times) parks its records the first time only; before,
// every retry wrote them again, on one partition key.
func TestRelayParksEachRecordOnce(t *testing.T) {
	w := newWorld(t)
	w.post(t, "Hello", time.Now())
	ev, _ := w.streamEvent(t)
	for i := range ev.Records {
		ev.Records[i].EventSourceArn = w.st.Resources.StreamARN
	}
	counting := &countingParking{Parking: w.store.Relay}
	r := w.outboxRelay()
	r.Parking = counting
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		resp, err := r.HandleStream(ctx, ev)
		cancel()
		if err != nil || len(resp.BatchItemFailures) != 1 {
			t.Fatalf("got %+v %v, want the one record failed", resp, err)
		}
	}
	if counting.parked != 1 {
		t.Fatalf("3 failed tries of one record parked %d records, want 1", counting.parked)
	}
}
