package localrun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/relay"
)

// streamRig is a stack, items written to its table, and a stream mapping
// whose invocations it records by the items' pk.
type streamRig struct {
	st      *stacktest.Stack
	mu      sync.Mutex
	batches [][]string
}

func newStreamRig(t *testing.T) *streamRig {
	t.Helper()
	return &streamRig{st: stacktest.New(t)}
}

func (r *streamRig) put(t *testing.T, pks ...string) {
	t.Helper()
	for _, pk := range pks {
		_, err := r.st.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &r.st.Table, Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "#META"}}})
		if err != nil {
			t.Fatalf("put %s: %v", pk, err)
		}
	}
}

// record notes a batch and returns its pks with their sequence numbers.
func (r *streamRig) record(ev events.DynamoDBEvent) (pks, seqs []string) {
	for _, rec := range ev.Records {
		pks = append(pks, rec.Change.Keys["pk"].String())
		seqs = append(seqs, rec.Change.SequenceNumber)
	}
	r.mu.Lock()
	r.batches = append(r.batches, pks)
	r.mu.Unlock()
	return pks, seqs
}

func (r *streamRig) got() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprint(r.batches)
}

// run starts m on the rig's stream (stopped when the test ends) and waits
// until the rig has seen want batches (or 15 s), and then 300 ms more, so
// that a batch too many shows.
func (r *streamRig) run(t *testing.T, m *localrun.StreamMapping, want int) {
	t.Helper()
	m.Streams, m.StreamARN, m.SQS, m.Poll = dynamodbstreams.NewFromConfig(r.st.AWS), r.st.Resources.StreamARN, r.st.SQS, 20*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done, err := m.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		n := len(r.batches)
		r.mu.Unlock()
		if n >= want {
			time.Sleep(300 * time.Millisecond)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("batches %s, want %d of them", r.got(), want)
}

// TestStreamTimeoutBisectsThenDiscards: a handler that overruns its
// Timeout on one record fails its batch (though it later returns success);
// the batch is bisected down to that record, which is retried
// MaximumRetryAttempts times and then sent to the on-failure destination as
// Lambda's invocation record; every other record is handled once.
func TestStreamTimeoutBisectsThenDiscards(t *testing.T) {
	r := newStreamRig(t)
	r.put(t, "T#a", "T#b", "T#c", "T#d")
	dlq := r.st.Resources.Queues["RelayFailureQueue"]
	var poisonSeq string
	m := &localrun.StreamMapping{
		Function: localrun.Function{Name: "SlowFunction", Timeout: 300 * time.Millisecond},
		Source: samtemplate.EventSource{Type: "DynamoDB", BatchSize: 4, StartingPosition: "TRIM_HORIZON", Bisect: true,
			MaximumRetryAttempts: 1, ReportBatchItemFailures: true},
		OnFailureURL: dlq,
		Handler: func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			pks, seqs := r.record(ev)
			for i, pk := range pks {
				if pk == "T#b" {
					// Abandoned handlers run on: guard what they share.
					r.mu.Lock()
					poisonSeq = seqs[i]
					r.mu.Unlock()
					if _, ok := ctx.Deadline(); !ok {
						t.Errorf("the handler's context has no deadline")
					}
					<-ctx.Done()
					time.Sleep(50 * time.Millisecond)
					return events.DynamoDBEventResponse{}, nil // too late to count
				}
			}
			return events.DynamoDBEventResponse{}, nil
		},
	}
	r.run(t, m, 6)
	if got, want := r.got(), "[[T#a T#b T#c T#d] [T#a T#b] [T#a] [T#b] [T#b] [T#c T#d]]"; got != want {
		t.Fatalf("batches %s, want %s", got, want)
	}
	out, err := r.st.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &dlq, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("destination: %d messages (%v), want 1", len(out.Messages), err)
	}
	body := aws.ToString(out.Messages[0].Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	var ir localrun.InvocationRecord
	if err := json.Unmarshal([]byte(body), &ir); err != nil {
		t.Fatal(err)
	}
	b := ir.Batch
	if ir.RequestContext.Condition != localrun.ConditionRetriesExhausted || ir.RequestContext.ApproximateInvokeCount != 2 ||
		ir.ResponseContext.FunctionError != "Unhandled" || b.BatchSize != 1 || b.StartSequenceNumber != poisonSeq || b.EndSequenceNumber != poisonSeq ||
		b.StreamARN != r.st.Resources.StreamARN || ir.Version != "1.0" {
		t.Fatalf("invocation record %s, want T#b's (%s) after 2 invocations, RetryAttemptsExhausted", body, poisonSeq)
	}
	// The relay's replay reads it as the records to replay.
	if fr, err := relay.ParseFailureRecord(body); err != nil || fr.Batch.StartSequenceNumber != poisonSeq {
		t.Fatalf("relay.ParseFailureRecord: %+v %v", fr, err)
	}
}

// TestStreamBatchSizeFilterAndPartialFailure: records that pass none of
// the filters never reach the function; batches hold at most BatchSize
// records; a partial batch response checkpoints before the first failed
// record, which starts the next batch.
func TestStreamBatchSizeFilterAndPartialFailure(t *testing.T) {
	r := newStreamRig(t)
	r.put(t, "T#0", "X#skip", "T#1", "T#2", "T#3", "X#skip2", "T#4", "T#5", "T#6")
	failed := false
	m := &localrun.StreamMapping{
		Function: localrun.Function{Name: "PartialFunction", Timeout: 5 * time.Second},
		Source: samtemplate.EventSource{Type: "DynamoDB", BatchSize: 3, StartingPosition: "TRIM_HORIZON", ReportBatchItemFailures: true,
			MaximumRetryAttempts: -1, Filters: []string{`{"dynamodb": {"Keys": {"pk": {"S": [{"prefix": "T#"}]}}}}`}},
		Handler: func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			pks, seqs := r.record(ev)
			if !failed && len(pks) > 1 && pks[1] == "T#1" {
				failed = true
				// Both named: the lowest is the checkpoint.
				return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{
					{ItemIdentifier: seqs[2]}, {ItemIdentifier: seqs[1]}}}, nil
			}
			return events.DynamoDBEventResponse{}, nil
		},
	}
	r.run(t, m, 3)
	if got, want := r.got(), "[[T#0 T#1 T#2] [T#1 T#2 T#3] [T#4 T#5 T#6]]"; got != want {
		t.Fatalf("batches %s, want %s", got, want)
	}
}

// TestStreamInvalidFailureAndRecordAge: a partial response naming a record
// not in the batch fails the whole batch (retried, counted); records older
// than MaximumRecordAge are discarded with RecordAgeExceeded instead of
// being retried for ever.
func TestStreamInvalidFailureAndRecordAge(t *testing.T) {
	r := newStreamRig(t)
	r.put(t, "T#0", "T#1")
	dlq := r.st.Resources.Queues["RelayFailureQueue"]
	m := &localrun.StreamMapping{
		Function: localrun.Function{Name: "InvalidFunction", Timeout: 5 * time.Second},
		Source: samtemplate.EventSource{Type: "DynamoDB", BatchSize: 10, StartingPosition: "TRIM_HORIZON", ReportBatchItemFailures: true,
			MaximumRetryAttempts: -1, MaximumRecordAge: 2 * time.Second},
		OnFailureURL: dlq,
		Handler: func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			r.record(ev)
			time.Sleep(300 * time.Millisecond)
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: "not-in-the-batch"}}}, nil
		},
	}
	r.run(t, m, 2)
	// The records expire one by one, by their own arrival times: both in
	// one invocation record, or each in its own when the machine put them
	// in different seconds.
	discarded := 0
	for deadline := time.Now().Add(15 * time.Second); discarded < 2 && time.Now().Before(deadline); {
		out, err := r.st.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &dlq, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range out.Messages {
			var ir localrun.InvocationRecord
			if err := json.Unmarshal([]byte(aws.ToString(msg.Body)), &ir); err != nil {
				t.Fatal(err)
			}
			if ir.RequestContext.Condition != localrun.ConditionRecordAge || ir.ResponseContext.FunctionError != "Unhandled" {
				t.Fatalf("invocation record %+v, want RecordAgeExceeded after an unhandled error", ir)
			}
			discarded += ir.Batch.BatchSize
		}
	}
	if discarded != 2 {
		t.Fatalf("the destination's invocation records name %d records, want both", discarded)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.batches)
	rest := false
	for i := range n {
		switch got := fmt.Sprint(r.batches[i]); {
		case got == "[T#0 T#1]" && !rest:
		case got == "[T#1]":
			rest = true // T#0 expired first
		default:
			t.Fatalf("batch %d: %s, want the whole batch retried (less the records that expired)", i, got)
		}
	}
	if n < 2 || n > 8 {
		t.Fatalf("%d invocations within the records' 2 s, want 300 ms ones with growing backoffs between them (about 4)", n)
	}
}

// TestStreamThrottledBatchIsInvokedAgain: while the account's one
// execution is taken, the mapping's invocations are throttled (the handler
// is not run) and the batch is invoked again once it is free, without the
// throttles counting as the function's failures (MaximumRetryAttempts 0
// would otherwise discard the batch at the first).
func TestStreamThrottledBatchIsInvokedAgain(t *testing.T) {
	r := newStreamRig(t)
	r.put(t, "T#a", "T#b")
	conc := localrun.NewConcurrency(1)
	release, ok := conc.Acquire()
	if !ok {
		t.Fatal("the only execution slot was not free")
	}
	time.AfterFunc(500*time.Millisecond, release)
	m := &localrun.StreamMapping{
		Function: localrun.Function{Name: "ThrottledFunction", Timeout: 5 * time.Second, Concurrency: conc},
		Source:   samtemplate.EventSource{Type: "DynamoDB", BatchSize: 10, StartingPosition: "TRIM_HORIZON", MaximumRetryAttempts: 0},
		Handler: func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			r.record(ev)
			return events.DynamoDBEventResponse{}, nil
		},
	}
	r.run(t, m, 1)
	if got, want := r.got(), "[[T#a T#b]]"; got != want {
		t.Fatalf("batches %s, want %s", got, want)
	}
	if conc.Throttled() == 0 {
		t.Fatal("no invocation was throttled while the slot was taken")
	}
}
