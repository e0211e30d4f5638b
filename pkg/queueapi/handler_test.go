package queueapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/queueapi"
)

// fakeService is a Processor with a function field that records the jobs it
// was given.
type fakeService struct {
	process func(ctx context.Context, job messages.Job) error

	mu   sync.Mutex
	seen []string
}

func (f *fakeService) Process(ctx context.Context, job messages.Job) error {
	f.mu.Lock()
	f.seen = append(f.seen, job.MessageID)
	f.mu.Unlock()
	if f.process == nil {
		return nil
	}
	return f.process(ctx, job)
}

func (f *fakeService) processed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

var ids = chat.NewIDs()

// record returns an SQS record carrying a job for a fresh message.
func record(sqsID string) (events.SQSMessage, string) {
	job := messages.Job{MessageID: ids.New(time.Now()), ChannelID: ids.New(time.Now()), Content: "Hello", SourceLanguage: "en"}
	return events.SQSMessage{MessageId: sqsID, Body: job.Encode(), Attributes: map[string]string{"ApproximateReceiveCount": "1"}}, job.MessageID
}

func failures(resp events.SQSEventResponse) []string {
	out := []string{}
	for _, f := range resp.BatchItemFailures {
		out = append(out, f.ItemIdentifier)
	}
	return out
}

// captureLog sends the default logger's output to a buffer for the test.
func captureLog(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

func TestTranslateHandlerReportsOnlyFailedRecords(t *testing.T) {
	r1, _ := record("sqs-1")
	r2, m2 := record("sqs-2")
	r3, _ := record("sqs-3")
	poison := events.SQSMessage{MessageId: "sqs-poison", Body: `{"message_id": "not-an-id"}`, Attributes: map[string]string{"ApproximateReceiveCount": "3"}}
	garbage := events.SQSMessage{MessageId: "sqs-garbage", Body: `not json`, Attributes: map[string]string{"ApproximateReceiveCount": "5"}}
	for _, tc := range []struct {
		name    string
		records []events.SQSMessage
		fail    map[string]error
		want    []string
		calls   int
	}{
		{"all succeed", []events.SQSMessage{r1, r2, r3}, nil, []string{}, 3},
		{"one fails", []events.SQSMessage{r1, r2, r3}, map[string]error{m2: chat.Unavailable(errors.New("throttled"))}, []string{"sqs-2"}, 3},
		{"poison records fail without a call", []events.SQSMessage{poison, r1, garbage}, nil, []string{"sqs-poison", "sqs-garbage"}, 1},
		{"empty batch", nil, nil, []string{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			captureLog(t)
			svc := &fakeService{process: func(_ context.Context, job messages.Job) error { return tc.fail[job.MessageID] }}
			resp, err := queueapi.NewTranslateHandler(svc)(context.Background(), events.SQSEvent{Records: tc.records})
			if err != nil {
				t.Fatalf("handler returned %v; it must never return an error", err)
			}
			if got := failures(resp); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("batch item failures: got %v, want %v", got, tc.want)
			}
			if got := svc.processed(); got != tc.calls {
				t.Fatalf("Process calls: got %d, want %d", got, tc.calls)
			}
		})
	}
}

func TestPoisonIsLoggedOnceWithItsReceiveCount(t *testing.T) {
	logs := captureLog(t)
	poison := events.SQSMessage{MessageId: "sqs-poison", Body: `{"message_id": 42}`, Attributes: map[string]string{"ApproximateReceiveCount": "4"}}
	queueapi.NewTranslateHandler(&fakeService{})(context.Background(), events.SQSEvent{Records: []events.SQSMessage{poison}})
	// Besides the batch's summary line, exactly one line about the poison.
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if !strings.Contains(l, `"msg":"batch"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("logged %d lines about the poison, want 1:\n%s", len(lines), logs)
	}
	var entry map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &entry); err != nil {
		t.Fatalf("log line %q: %v", lines[0], err)
	}
	if entry["level"] != "ERROR" || entry["sqs_message_id"] != "sqs-poison" || entry["receive_count"] != "4" ||
		!strings.Contains(entry["msg"].(string), "poison") {
		t.Fatalf("log entry %v, want an ERROR naming the poison record and its receive count 4", entry)
	}
}

func TestDuplicateRecordsOfOneMessageAreProcessedOnce(t *testing.T) {
	captureLog(t)
	r1, _ := record("sqs-1")
	dup := r1
	dup.MessageId = "sqs-1-again"
	svc := &fakeService{process: func(context.Context, messages.Job) error { return errors.New("translator down") }}
	resp, _ := queueapi.NewTranslateHandler(svc)(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r1, dup}})
	if svc.processed() != 1 {
		t.Fatalf("processed %d times, want once", svc.processed())
	}
	if got, want := failures(resp), []string{"sqs-1", "sqs-1-again"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("failures %v, want both records %v", got, want)
	}
}

func TestAPanickingJobFailsAlone(t *testing.T) {
	captureLog(t)
	r1, m1 := record("sqs-1")
	r2, _ := record("sqs-2")
	svc := &fakeService{process: func(_ context.Context, job messages.Job) error {
		if job.MessageID == m1 {
			panic("boom")
		}
		return nil
	}}
	resp, err := queueapi.NewTranslateHandler(svc)(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r1, r2}})
	if err != nil || !reflect.DeepEqual(failures(resp), []string{"sqs-1"}) {
		t.Fatalf("got %v, %v; want only sqs-1 failed", failures(resp), err)
	}
}

func TestRecordsAreProcessedConcurrentlyWithABound(t *testing.T) {
	var inFlight, maxInFlight atomic.Int32
	svc := &fakeService{process: func(context.Context, messages.Job) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
		return nil
	}}
	var recs []events.SQSMessage
	for i := 0; i < 10; i++ {
		r, _ := record("sqs-" + string(rune('a'+i)))
		recs = append(recs, r)
	}
	resp, _ := queueapi.NewTranslateHandler(svc)(context.Background(), events.SQSEvent{Records: recs})
	if len(resp.BatchItemFailures) != 0 || svc.processed() != 10 {
		t.Fatalf("failures %v, processed %d; want none and 10", failures(resp), svc.processed())
	}
	if got := int(maxInFlight.Load()); got != queueapi.RecordConcurrency {
		t.Fatalf("max records in flight: got %d, want %d", got, queueapi.RecordConcurrency)
	}
}

func TestResponseJSON(t *testing.T) {
	// Lambda reads the response as JSON: an empty list, not null, when all
	// records succeeded; the message ids otherwise.
	captureLog(t)
	resp, _ := queueapi.NewTranslateHandler(&fakeService{})(context.Background(), events.SQSEvent{})
	b, _ := json.Marshal(resp)
	if string(b) != `{"batchItemFailures":[]}` {
		t.Fatalf("response JSON %s", b)
	}
}
