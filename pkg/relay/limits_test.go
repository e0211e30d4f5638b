package relay_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// worst are 40,000-character contents of the characters that cost most on
// the way: '<' (6 bytes JSON-escaped), U+2028 (escaped too), emoji (4
// bytes), U+FFFF (refused by SQS). Each starts with a word, so that there
// is something to translate (the run of characters is one protected span).
var worst = map[string]string{
	"'<'":    "Note: " + strings.Repeat("<", 40000-6),
	"U+2028": "Note: " + strings.Repeat("\u2028", 40000-6),
	"emoji":  "Note: " + strings.Repeat("😀", 40000-6),
	"U+FFFF": "Note: " + strings.Repeat("\uffff", 40000-6),
}

// TestWorstContentThroughRelayQueueTranslate posts ten messages of each
// worst content, relays their real stream records with the real queue
// (one SendMessageBatch for ten: the defect was BatchRequestTooLong on every
// retry), and translates them with the real handler: each is stored
// translated, and finished.
func TestWorstContentThroughRelayQueueTranslate(t *testing.T) {
	for name, content := range worst {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			var posted []string
			for i := 0; i < 10; i++ {
				posted = append(posted, w.post(t, content, time.Now()))
			}
			ev, _ := w.streamEvent(t)
			if len(ev.Records) != 10 {
				t.Fatalf("stream holds %d inserts, want 10", len(ev.Records))
			}
			r := &relay.Relay{Queue: sqsqueue.New(w.st.SQS, w.st.Resources.Queues["TranslationQueue"])}
			w.st.Calls.Reset()
			resp, err := r.HandleStream(context.Background(), ev)
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("relay: %+v %v, want every record sent", resp, err)
			}
			if got := w.st.Calls.Calls(); !reflect.DeepEqual(got, []string{"SQS.SendMessageBatch"}) {
				t.Fatalf("relaying 10 records made %v, want one SendMessageBatch", got)
			}

			w.st.Calls.Reset()
			tr := &spanish{}
			if n := w.translateQueue(t, tr); n != 10 || tr.calls.Load() != 10 {
				t.Fatalf("translated %d jobs with %d calls, want 10 and 10", n, tr.calls.Load())
			}
			// Per message: Query readers, GetItem (content and what is done),
			// one TransactWriteItems (translations, languages and marker,
			// conditioned on the message's revision).
			counts := map[string]int{}
			for _, c := range w.st.Calls.Calls() {
				counts[c]++
			}
			for _, op := range []string{"DynamoDB.Query", "DynamoDB.GetItem", "DynamoDB.TransactWriteItems"} {
				if counts[op] != 10 {
					t.Fatalf("translating 10 messages made %v, want 10 of %s", counts, op)
				}
			}
			for _, id := range posted {
				if got, flag := w.translation(t, id); got != "[es] "+content || flag != "" {
					t.Fatalf("message %s: translation of %d bytes flagged %q, want [es] + the content", id, len(got), flag)
				}
				if w.marked(t, id) {
					t.Fatalf("message %s still marked untranslated after its translation", id)
				}
			}
		})
	}
}

// TestTenWorstJobsFitOneBatch: the jobs of ten 40,000-character messages
// of any content, every field at its worst, make one request far below
// SQS's limits.
func TestTenWorstJobsFitOneBatch(t *testing.T) {
	total := 0
	for _, content := range worst {
		j := messages.Job{MessageID: ids.New(time.Now()), WorkspaceID: ids.New(time.Now()), ChannelID: ids.New(time.Now()),
			Content: content, SourceLanguage: "zh-Hant-TW-x-private-\uffff", AuthorType: "bot", CreatedAt: time.Now()}
		body := j.Encode()
		if err := sqsqueue.CheckBody(body); err != nil {
			t.Fatalf("body refused: %v", err)
		}
		total = max(total, len(body))
	}
	if 10*total > sqsqueue.MaxBatchBytes/10 {
		t.Fatalf("ten jobs take up to %d bytes, want a small fraction of %d", 10*total, sqsqueue.MaxBatchBytes)
	}
}

// poisonQueue refuses every job for good.
type poisonQueue struct{ sent int }

func (p *poisonQueue) SendJobs(_ context.Context, jobs []messages.Job) (messages.SendResult, error) {
	res := messages.SendResult{Poison: map[int]error{}}
	for i := range jobs {
		res.Poison[i] = sqsqueue.ErrRefusedBody
	}
	p.sent += len(jobs)
	return res, nil
}

// TestPoisonDoesNotHoldTheShard: records the queue refuses for good are
// not reported for retry, so the shard moves on; their messages keep the
// marker the sweep works from.
func TestPoisonDoesNotHoldTheShard(t *testing.T) {
	w := newWorld(t)
	id := w.post(t, worst["U+FFFF"], time.Now())
	ev, _ := w.streamEvent(t)
	q := &poisonQueue{}
	resp, err := (&relay.Relay{Queue: q}).HandleStream(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != 0 || q.sent != 1 {
		t.Fatalf("relay: %+v %v (%d sent), want no failure reported", resp, err, q.sent)
	}
	if !w.marked(t, id) {
		t.Fatalf("a poison record's message lost its marker")
	}
}
