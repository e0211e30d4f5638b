package attempt_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/delivery/attempt"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/netguard"
)

// TestIsolationReport measures how receivers that time out on every
// attempt affect the others' delivery latency (contract section 14), and
// only reports it (docs/delivery.md, "Isolation, measured"): local
// receivers, the in-memory store of BenchmarkDeliveries (which keeps
// failure streaks), queues of Go channels read in batches of ten (as the
// event source mappings send them), an offered load of 200 deliveries a
// second to 50 webhooks for 3 s, and a 200 ms client timeout standing for
// AWS's 10 s. Four instances in two layouts: one lane (every instance on
// the delivery queue, as before the slow lane), and two lanes (three on
// the delivery queue, one on the slow lane, to which deliveries of a
// webhook with a failure streak or a slow mark are moved; marked after a
// tenth of the timeout, as in AWS), the latter with the timing-out
// receivers starting to time out as the window opens (onset) or before it
// (established). It prints the healthy
// receivers' p50 and p99 latency, from the send to the receiver's answer,
// with 0%, 10% and 50% of the webhooks timing out, and how many attempts
// timed out on the delivery queue's instances. Retries are due 5 s after a
// failure, after the measured window: they are counted, not run. Set
// ISOLATION_REPORT=1 to run it: it takes about 40 s and only reports.
func TestIsolationReport(t *testing.T) {
	if os.Getenv("ISOLATION_REPORT") == "" {
		t.Skip("SKIPPED: a measurement, not a check; run with ISOLATION_REPORT=1 (docs/delivery.md)")
	}
	for _, layout := range []isolationLayout{
		{name: "one lane (4)"},
		{name: "two lanes (3 + 1), onset", lanes: true},
		{name: "two lanes (3 + 1), established", lanes: true, established: true},
	} {
		for _, pct := range []int{0, 10, 50} {
			r := isolationRun(t, pct, layout)
			t.Logf("%s, timing out: %2d%% of webhooks; healthy deliveries %d: p50 %v, p99 %v; timeouts on the delivery queue %d, moved %d",
				layout.name, pct, r.n, r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond), r.fastTimeouts, r.moved)
			fmt.Printf("| %s | %d%% | %d | %v | %v | %d |\n", layout.name, pct, r.n, r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond), r.fastTimeouts)
		}
	}
}

// isolationLayout is how the report's instances read the queues: all on
// the delivery queue, or three there and one on the slow lane; and whether
// the timing-out receivers start timing out with the window (onset: each
// one's first deliveries are attempted on the delivery queue until its
// first attempt is marked slow) or had done so before (established: their
// streak is known when the window starts).
type isolationLayout struct {
	name        string
	lanes       bool
	established bool
}

type isolationResult struct {
	p50, p99     time.Duration
	n            int
	fastTimeouts int64
	moved        int64
}

// chanQueue is a delivery.Queue of a Go channel: a message sent now is
// read by the lane's instances; a delayed one (a retry, 5 s on) falls
// after the measured window and is only counted.
type chanQueue struct {
	ch      chan string
	moved   atomic.Int64
	delayed atomic.Int64
}

func (q *chanQueue) Schedule(_ context.Context, d evs.Delivery, delay time.Duration) error {
	if delay > 0 {
		q.delayed.Add(1)
		return nil
	}
	msg, err := d.MarshalQueue()
	if err != nil {
		return err
	}
	if d.Attempt == 0 {
		q.moved.Add(1)
	}
	q.ch <- msg
	return nil
}

// countTo counts the requests a client sends to host.
type countTo struct {
	host string
	n    atomic.Int64
	base http.RoundTripper
}

func (c *countTo) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == c.host {
		c.n.Add(1)
	}
	return c.base.RoundTrip(r)
}

func isolationRun(t *testing.T, timeoutPct int, layout isolationLayout) isolationResult {
	t.Helper()
	const (
		webhooks  = 50
		instances = 4
		rate      = 200 // deliveries a second offered
		duration  = 3 * time.Second
		timeout   = 200 * time.Millisecond
	)
	var (
		mu   sync.Mutex
		sent = map[string]time.Time{}
		lat  []time.Duration
	)
	ok := loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(attempt.HeaderDelivery)
		mu.Lock()
		if at, found := sent[id]; found {
			lat = append(lat, time.Since(at))
		}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	hang := loopback(t, hangs)
	hangURL, _ := url.Parse(hang.URL)
	allow, _ := netguard.ParseCIDRs("127.0.0.1/32")
	st := &memStore{hooks: map[string]delivery.Webhook{}}
	slow := webhooks * timeoutPct / 100
	for i := range webhooks {
		u := ok.URL
		if i < slow {
			u = hang.URL
		}
		key := "W" + strconv.Itoa(i)
		w := delivery.Webhook{ID: key, Kind: evs.KindOutbound, Key: key, URL: u, Active: true, Secrets: [][]byte{[]byte("whsig_report")}}
		if i < slow && layout.established {
			w.FailingSince, w.FailedAttempts = time.Now().Add(-time.Minute), 3
		}
		st.hooks[key] = w
	}
	ev := evs.Event{ID: "E", Type: evs.RoomClosed, WorkspaceID: "WS", CreatedAt: time.Now(), Data: evs.Room{Name: "isolation"}}
	body, _ := evs.Encode(ev)
	capacity := rate*int(duration/time.Second) + webhooks
	fastQ := &chanQueue{ch: make(chan string, capacity)}
	slowQ := &chanQueue{ch: make(chan string, capacity)}
	const fastURL, slowURL = "https://sqs.us-east-1.amazonaws.invalid/000000000000/fast", "https://sqs.us-east-1.amazonaws.invalid/000000000000/slow"
	arns := map[*chanQueue]string{fastQ: "arn:aws:sqs:us-east-1:000000000000:fast", slowQ: "arn:aws:sqs:us-east-1:000000000000:slow"}
	var fastCounters []*countTo
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range instances {
		client := (&netguard.Guard{Allow: allow, AllowOnly: true}).Client()
		client.Timeout = timeout
		d := &attempt.Deliverer{Store: st, Queue: fastQ, Client: client, Schedule: attempt.DefaultSchedule}
		from := fastQ
		if layout.lanes {
			// SlowAfter a tenth of the timeout, as 1 s is of AWS's 10 s.
			d.Slow, d.LaneOf, d.Marker, d.SlowAfter = slowQ, delivering.Lanes(delivering.Queues{Fast: fastURL, Slow: slowURL}), st, timeout/10
			if i == instances-1 {
				from = slowQ
			}
		}
		if from == fastQ {
			// Count the attempts to the hanging receiver made here.
			c := &countTo{host: hangURL.Host, base: client.Transport}
			client.Transport = c
			fastCounters = append(fastCounters, c)
		}
		wg.Go(func() {
			rec := func(m string, n int) events.SQSMessage {
				return events.SQSMessage{MessageId: strconv.Itoa(n), Body: m, EventSource: "aws:sqs", EventSourceARN: arns[from]}
			}
			for {
				var batch events.SQSEvent
				select {
				case <-ctx.Done():
					return
				case m := <-from.ch:
					batch.Records = append(batch.Records, rec(m, 0))
				}
				// The batching window: up to ten, or what arrives within 20 ms.
				window := time.After(20 * time.Millisecond)
			fill:
				for len(batch.Records) < 10 {
					select {
					case m := <-from.ch:
						batch.Records = append(batch.Records, rec(m, len(batch.Records)))
					case <-window:
						break fill
					}
				}
				_, _ = d.HandleSQS(context.Background(), batch)
			}
		})
	}
	start := time.Now()
	for i := 0; time.Since(start) < duration; i++ {
		// Every webhook in turn, so each batch mixes them as a queue would.
		key := "W" + strconv.Itoa((i*7)%webhooks)
		id := "D" + strconv.Itoa(i)
		msg, _ := evs.Delivery{ID: id, WebhookID: key, WebhookKey: key, Kind: evs.KindOutbound, EventID: ev.ID, EventType: ev.Type, Body: body}.MarshalQueue()
		mu.Lock()
		sent[id] = time.Now()
		mu.Unlock()
		fastQ.ch <- msg
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * time.Second / rate)))
	}
	// Let the backlog of the delivery queue drain, then stop (the slow
	// lane's backlog is the timing-out receivers' own).
	for deadline := time.Now().Add(10 * time.Second); len(fastQ.ch) > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(2 * timeout)
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(lat) == 0 {
		t.Fatalf("no healthy delivery measured")
	}
	slices.Sort(lat)
	r := isolationResult{p50: lat[len(lat)/2], p99: lat[len(lat)*99/100], n: len(lat), moved: slowQ.moved.Load()}
	for _, c := range fastCounters {
		r.fastTimeouts += c.n.Load()
	}
	return r
}
