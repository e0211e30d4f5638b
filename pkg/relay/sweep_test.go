package relay_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// TestRelayFailsForGoodThenTheSweepTranslates: the relay cannot reach the
// queue on any retry, and its record is gone (it aged out of the stream).
// The message still holds its marker; the sweep, once it is due, queues it
// again, the real translation handler translates it and clears the
// marker, and the next sweep finds nothing.
func TestRelayFailsForGoodThenTheSweepTranslates(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	posted := time.Now()
	content := worst["'<'"]
	id := w.post(t, content, posted)
	ev, _ := w.streamEvent(t)
	broken := &relay.Relay{Queue: sqsqueue.New(w.st.SQS, w.st.Resources.Queues["TranslationQueue"]+"-unreachable")}
	for retry := 0; retry < 3; retry++ {
		resp, _ := broken.HandleStream(ctx, ev)
		if len(resp.BatchItemFailures) != 1 {
			t.Fatalf("retry %d: %+v, want the record reported for retry", retry, resp)
		}
	}
	if got, _ := w.translation(t, id); got != "" || !w.marked(t, id) {
		t.Fatalf("before the sweep: translation %q, marked %v; want none, marked", got, w.marked(t, id))
	}

	queue := sqsqueue.New(w.st.SQS, w.st.Resources.Queues["TranslationQueue"])
	at := func(d time.Duration) chat.Clock { return func() time.Time { return posted.Add(d) } }
	early, err := (&relay.Sweep{Store: w.store.Translation, Queue: queue, Now: at(dynamo.PendingGrace - time.Minute)}).Run(ctx)
	if err != nil || early.Due != 0 {
		t.Fatalf("sweep within the grace period: %+v %v, want nothing due", early, err)
	}
	w.st.Calls.Reset()
	sw := &relay.Sweep{Store: w.store.Translation, Queue: queue, Now: at(25 * time.Hour)}
	res, err := sw.Run(ctx)
	if err != nil || res != (relay.SweepResult{Due: 1, Requeued: 1}) {
		t.Fatalf("sweep: %+v %v, want the message requeued", res, err)
	}
	counts := map[string]int{}
	for _, c := range w.st.Calls.Calls() {
		counts[c]++
	}
	if want := map[string]int{"DynamoDB.Query": dynamo.PendingShards, "SQS.SendMessageBatch": 1, "DynamoDB.UpdateItem": 1}; !reflect.DeepEqual(counts, want) {
		t.Fatalf("sweep made %v, want %v (one Query per index shard)", counts, want)
	}

	if n := w.translateQueue(t, &spanish{}); n != 1 {
		t.Fatalf("translated %d jobs, want 1", n)
	}
	if got, _ := w.translation(t, id); got != "[es] "+content {
		t.Fatalf("after the sweep: translation of %d bytes, want [es] + the content", len(got))
	}
	if w.marked(t, id) {
		t.Fatalf("the translated message is still marked")
	}
	if res, err := (&relay.Sweep{Store: w.store.Translation, Queue: queue, Now: at(48 * time.Hour)}).Run(ctx); err != nil || res.Due != 0 {
		t.Fatalf("next sweep: %+v %v, want nothing due", res, err)
	}
}

// TestSweepGivesUp: a message whose job the queue always refuses is queued
// again five times, each later than the one before, then given up on (the
// alarm's metric) and never queued again; the translation function still
// clears a marker it gave up on.
func TestSweepGivesUp(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	posted := time.Now().Add(-time.Hour)
	id := w.post(t, "Hello", posted)
	q := &poisonQueue{}
	now := posted
	var gaveUp int
	for run := 0; run < 40 && gaveUp == 0; run++ {
		now = now.Add(30 * time.Minute)
		res, err := (&relay.Sweep{Store: w.store.Translation, Queue: q, Now: func() time.Time { return now }}).Run(ctx)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		gaveUp += res.GaveUp
	}
	if q.sent != relay.DefaultMaxAttempts || gaveUp != 1 {
		t.Fatalf("queued %d times, gave up %d times; want %d and 1", q.sent, gaveUp, relay.DefaultMaxAttempts)
	}
	// Backoff 15 min doubling: 5 attempts span more than 7 hours.
	if span := now.Sub(posted); span < 7*time.Hour {
		t.Fatalf("gave up %v after the post, want the backoff to double", span)
	}
	res, err := (&relay.Sweep{Store: w.store.Translation, Queue: q, Now: func() time.Time { return now.Add(30 * 24 * time.Hour) }}).Run(ctx)
	if err != nil || res.Due != 0 || q.sent != relay.DefaultMaxAttempts {
		t.Fatalf("after giving up: %+v %v, %d sent; want nothing due", res, err, q.sent)
	}
	if !w.marked(t, id) {
		t.Fatalf("the marker given up on is gone; want it kept for an operator")
	}
	// A dead-letter redrive later translates it: the marker goes.
	job := messages.Job{MessageID: id, ChannelID: w.channel, SourceLanguage: "en"}
	if err := (&translationService{w}).process(ctx, job); err != nil || w.marked(t, id) {
		t.Fatalf("translating a given-up message: %v, marked %v; want it finished", err, w.marked(t, id))
	}
}

// fakePending is a PendingStore with function fields that records moves.
type fakePending struct {
	due       []messages.Pending
	requeued  map[string]time.Time
	gaveUp    []string
	failMoves bool
}

func (f *fakePending) DuePending(context.Context, time.Time, int) ([]messages.Pending, error) {
	return f.due, nil
}

func (f *fakePending) Requeued(_ context.Context, p messages.Pending, next time.Time) error {
	if f.failMoves {
		return chat.Unavailable(errors.New("throttled"))
	}
	if f.requeued == nil {
		f.requeued = map[string]time.Time{}
	}
	f.requeued[p.Job.MessageID] = next
	return nil
}

func (f *fakePending) GiveUp(_ context.Context, p messages.Pending) error {
	f.gaveUp = append(f.gaveUp, p.Job.MessageID)
	return nil
}

// scriptedQueue answers each job by its message id: "retry", "poison" or
// sent.
type scriptedQueue map[string]string

func (s scriptedQueue) SendJobs(_ context.Context, jobs []messages.Job) (messages.SendResult, error) {
	var res messages.SendResult
	for i, j := range jobs {
		switch s[j.MessageID] {
		case "retry":
			res.Retry = append(res.Retry, i)
		case "poison":
			if res.Poison == nil {
				res.Poison = map[int]error{}
			}
			res.Poison[i] = errors.New("refused")
		}
	}
	return res, nil
}

func TestSweepDecisions(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	pending := func(id string, attempts int) messages.Pending {
		return messages.Pending{Job: messages.Job{MessageID: id}, Attempts: attempts, Version: "v"}
	}
	store := &fakePending{due: []messages.Pending{
		pending("first", 0), pending("third", 2), pending("last", 4), pending("spent", 5),
		pending("throttled", 1), pending("refused", 3),
	}}
	q := scriptedQueue{"throttled": "retry", "refused": "poison"}
	res, err := (&relay.Sweep{Store: store, Queue: q, Now: func() time.Time { return now }}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := (relay.SweepResult{Due: 6, Requeued: 3, Poisoned: 1, GaveUp: 1, Retry: 1}); res != want {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	wantNext := map[string]time.Duration{"first": 15 * time.Minute, "third": time.Hour, "last": 4 * time.Hour, "refused": 2 * time.Hour}
	if len(store.requeued) != len(wantNext) {
		t.Fatalf("requeued %v, want %v", store.requeued, wantNext)
	}
	for id, d := range wantNext {
		if got := store.requeued[id]; !got.Equal(now.Add(d)) {
			t.Fatalf("%s due again at %v, want %v later", id, got, d)
		}
	}
	if !reflect.DeepEqual(store.gaveUp, []string{"spent"}) {
		t.Fatalf("gave up on %v, want [spent]", store.gaveUp)
	}

	// A move that fails is retried next run, not counted.
	store = &fakePending{due: []messages.Pending{pending("first", 0)}, failMoves: true}
	res, _ = (&relay.Sweep{Store: store, Queue: q, Now: func() time.Time { return now }}).Run(context.Background())
	if res != (relay.SweepResult{Due: 1, Retry: 1}) {
		t.Fatalf("failed move: %+v, want one retry", res)
	}
}
