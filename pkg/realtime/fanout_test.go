package realtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/realtime"
)

// throttlingSender refuses sends to the connections in throttled with
// realtime.ErrThrottled, and sends the others.
type throttlingSender struct {
	fakeSender
	throttled map[string]bool
}

func (f *throttlingSender) Send(ctx context.Context, id string, b []byte) error {
	if f.throttled[id] {
		return fmt.Errorf("post: %w", realtime.ErrThrottled)
	}
	return f.fakeSender.Send(ctx, id, b)
}

// jobQueue is a realtime.JobQueue keeping what it was given.
type jobQueue struct {
	mu     sync.Mutex
	jobs   []realtime.Job
	delays []time.Duration
	fail   error
}

func (q *jobQueue) Enqueue(_ context.Context, jobs []realtime.Job, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail != nil {
		return q.fail
	}
	for _, j := range jobs {
		q.jobs = append(q.jobs, j)
		q.delays = append(q.delays, delay)
	}
	return nil
}

type metrics struct {
	mu sync.Mutex
	n  map[string]int
}

func (m *metrics) Count(_ context.Context, name string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n == nil {
		m.n = map[string]int{}
	}
	m.n[name] += n
}

// TestJobLeftoversAreRequeuedThenDropped: a job's throttled connections go
// back on the queue as one job of those connections, delayed more each
// attempt; the sent ones are not sent again. At the last attempt they are
// counted as dropped and closed (their clients reconnect with since), and
// nothing is queued.
func TestJobLeftoversAreRequeuedThenDropped(t *testing.T) {
	sender := &throttlingSender{throttled: map[string]bool{"c2": true, "c4": true}}
	q, m := &jobQueue{}, &metrics{}
	p := &realtime.Pusher{Store: &fakeStore{}, Sender: sender, Now: time.Now, Jobs: q, Metrics: m, Sent: &realtime.Sent{}}
	job := realtime.Job{Key: "ev-1#0", ChannelID: "ch", Data: []byte(`{"type":"message"}`), Connections: []string{"c1", "c2", "c3", "c4"}}
	if err := p.RunJob(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if len(q.jobs) != 1 || !slices.Equal(q.jobs[0].Connections, []string{"c2", "c4"}) && !slices.Equal(q.jobs[0].Connections, []string{"c4", "c2"}) ||
		q.jobs[0].Attempt != 1 || q.delays[0] != time.Second {
		t.Fatalf("requeued %+v after %v, want one job of c2 and c4, attempt 1, after 1s", q.jobs, q.delays)
	}
	if len(sender.sent) != 2 || m.n[realtime.MetricThrottled] != 2 {
		t.Fatalf("sent to %v, %d throttled; want c1 and c3 sent, 2 throttled", sender.sent, m.n[realtime.MetricThrottled])
	}
	// The next attempts: each later, until the last drops them.
	next := q.jobs[0]
	for attempt := 2; attempt < realtime.MaxJobAttempts; attempt++ {
		q.jobs, q.delays = nil, nil
		if err := p.RunJob(context.Background(), next); err != nil {
			t.Fatal(err)
		}
		want := min(time.Second<<(attempt-1), time.Minute)
		if len(q.jobs) != 1 || q.jobs[0].Attempt != attempt || q.delays[0] != want {
			t.Fatalf("attempt %d: requeued %+v after %v, want attempt %d after %v", attempt, q.jobs, q.delays, attempt, want)
		}
		next = q.jobs[0]
	}
	q.jobs = nil
	if err := p.RunJob(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	if len(q.jobs) != 0 || m.n[realtime.MetricDropped] != 2 || len(sender.closed) != 2 {
		t.Fatalf("last attempt: requeued %+v, %d dropped, closed %v; want nothing requeued, 2 dropped and closed", q.jobs, m.n[realtime.MetricDropped], sender.closed)
	}
	if len(sender.sent["c1"]) != 1 || len(sender.sent["c3"]) != 1 {
		t.Fatalf("sent %v: want c1 and c3 once each", sender.sent)
	}
}

// TestJobWhoseLeftoversCannotBeQueuedIsRetriedWhole: when the rest of a job
// cannot be queued, RunJob fails (the queue redelivers the job), and the
// redelivery sends only to the connections not yet sent to.
func TestJobWhoseLeftoversCannotBeQueuedIsRetriedWhole(t *testing.T) {
	sender := &throttlingSender{throttled: map[string]bool{"c2": true}}
	q := &jobQueue{fail: errors.New("queue down")}
	p := &realtime.Pusher{Store: &fakeStore{}, Sender: sender, Now: time.Now, Jobs: q, Sent: &realtime.Sent{}}
	job := realtime.Job{Key: "ev-2#0", ChannelID: "ch", Data: []byte(`{}`), Connections: []string{"c1", "c2", "c3"}}
	if err := p.RunJob(context.Background(), job); err == nil {
		t.Fatal("RunJob succeeded though its rest could not be queued")
	}
	sender.throttled = nil
	q.fail = nil
	if err := p.RunJob(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	for _, id := range job.Connections {
		if len(sender.sent[id]) != 1 {
			t.Fatalf("sent %v: want each connection once", sender.sent)
		}
	}
}

// TestLargeAudienceIsHandedOffInJobs: a change with more sends than
// FanoutAbove is queued as jobs of at most JobConnections connections, one
// payload each (one per reader language), and nothing is sent by the push.
func TestLargeAudienceIsHandedOffInJobs(t *testing.T) {
	store := &fakeStore{}
	for i := range 7 {
		lang := []string{"en", "es"}[i%2]
		store.conns = append(store.conns, realtime.Connection{ID: fmt.Sprintf("c%d", i), ChannelID: "ch1", Kind: realtime.KindMember, Language: lang, ExpiresAt: time.Now().Add(time.Hour)})
	}
	sender, q := &fakeSender{}, &jobQueue{}
	p := &realtime.Pusher{Store: store, Sender: sender, Translations: &fakeTranslations{stored: map[string]string{"es": "hola"}}, Encode: encode, Now: time.Now, Jobs: q,
		FanoutAbove: 5, JobConnections: 2}
	m := message("es")
	m.ChannelID = "ch1"
	if err := p.Push(context.Background(), realtime.Change{Key: "ev", Kind: realtime.MessageStored, Message: m}); err != nil {
		t.Fatal(err)
	}
	if len(sender.sent) != 0 {
		t.Fatalf("the push sent %v itself", sender.sent)
	}
	// 4 English readers in 2 jobs, 3 Spanish readers in 2.
	seen := map[string]bool{}
	payloads := map[string]bool{}
	for _, j := range q.jobs {
		if len(j.Connections) > 2 || j.ChannelID != "ch1" {
			t.Fatalf("job %+v: want at most 2 connections of ch1", j)
		}
		payloads[string(j.Data)] = true
		for _, c := range j.Connections {
			if seen[c] {
				t.Fatalf("%s in two jobs", c)
			}
			seen[c] = true
		}
	}
	if len(q.jobs) != 4 || len(seen) != 7 || len(payloads) != 2 {
		t.Fatalf("%d jobs for %d connections with %d payloads, want 4, 7 and 2", len(q.jobs), len(seen), len(payloads))
	}
}
