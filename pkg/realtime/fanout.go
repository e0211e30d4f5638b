package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// How a channel's pushes scale with its audience (docs/decisions.md,
// "Realtime fan-out"): the stream function reads each channel's audience
// once per batch (PushAll) and makes one payload per reader language; a
// change with more than FanoutAbove sends, and whatever a push could not
// finish (its deadline came, or API Gateway throttled it), is handed to
// the fan-out queue as Jobs of at most MaxJobConnections connections and
// one payload each. Fan-out workers (RealtimeFanoutFunction) send the
// jobs concurrently, many instances at once; what a worker cannot finish
// goes back on the queue as a job of the connections left, after a delay,
// up to MaxJobAttempts, and is then dropped, counted (PushesDropped, an
// alarm) and its connections closed, so that their clients reconnect with
// since and the backfill restores what they missed.

// Job is a share of one change's pushes: one payload to up to
// MaxJobConnections connections of one channel.
type Job struct {
	// Key names the job across retries (the change's key and the part).
	Key       string          `json:"key"`
	ChannelID string          `json:"channel_id"`
	Data      json.RawMessage `json:"data"`
	// Close also closes each connection and deletes its item (a room
	// closing).
	Close       bool     `json:"close,omitempty"`
	Connections []string `json:"connections"`
	// Attempt counts the workers that took the job before (0 for a new
	// one).
	Attempt int `json:"attempt,omitempty"`
}

// JobQueue hands jobs to the fan-out workers.
type JobQueue interface {
	// Enqueue queues jobs, each delayed by delay. Errors: any, when some
	// job may not be queued (the caller queues them all again).
	Enqueue(ctx context.Context, jobs []Job, delay time.Duration) error
}

// Metrics counts what the push does where an operator sees it (CloudWatch
// metrics through the function's log, with alarms in template.yaml).
type Metrics interface {
	// Count adds n to the metric name.
	Count(ctx context.Context, name string, n int)
}

// Metric names of the pushes.
const (
	// MetricThrottled counts sends API Gateway throttled (after the SDK's
	// own retries); each is retried by a job.
	MetricThrottled = "PushesThrottled"
	// MetricFailed counts sends that failed for another reason than a gone
	// connection; the connection is closed, so that its client reconnects
	// with since.
	MetricFailed = "PushesFailed"
	// MetricHandedOff counts sends handed to the fan-out queue.
	MetricHandedOff = "PushesHandedOff"
	// MetricDropped counts sends given up after MaxJobAttempts; their
	// connections are closed.
	MetricDropped = "PushesDropped"
)

// Fan-out limits.
const (
	// DefaultFanoutAbove is how many sends a change makes in the stream
	// function before it hands them all to the fan-out workers: 500 at 50
	// in flight and 20 ms a send is 0.2 s.
	DefaultFanoutAbove = 500
	// MaxJobConnections bounds a job: 500 connection ids (at most 128 bytes
	// each, 64 KB) and a payload of at most MaxMessageBytes (128 KB) stay
	// under SQS's 256 KB message.
	MaxJobConnections = 500
	// MaxJobAttempts bounds how often a job's connections are tried.
	MaxJobAttempts = 10
)

// ErrJobTooLarge is what a JobQueue returns for a job it cannot queue for
// its size (a payload of MaxMessageBytes that escapes to more than a queue
// message holds); the push then sends it itself.
var ErrJobTooLarge = errors.New("realtime: push job too large for the queue")

// ErrThrottled is what a Sender returns when API Gateway throttled the send
// (429 LimitExceededException) after the SDK's own retries.
var ErrThrottled = errors.New("realtime: send throttled")

// jobsOf groups sends into jobs of at most per connections sharing a
// payload, keyed key#<n>.
func jobsOf(key string, sends []send, per int) []Job {
	type group struct {
		data  []byte
		close bool
		conns []Connection
	}
	var order []string
	groups := map[string]*group{}
	for _, s := range sends {
		gk := strconv.FormatBool(s.close) + s.conn.ChannelID + "\x00" + string(s.data)
		g := groups[gk]
		if g == nil {
			g = &group{data: s.data, close: s.close}
			groups[gk] = g
			order = append(order, gk)
		}
		g.conns = append(g.conns, s.conn)
	}
	var jobs []Job
	for _, gk := range order {
		g := groups[gk]
		for start := 0; start < len(g.conns); start += per {
			part := g.conns[start:min(start+per, len(g.conns))]
			j := Job{Key: key + "#" + strconv.Itoa(len(jobs)), ChannelID: part[0].ChannelID, Data: g.data, Close: g.close}
			for _, c := range part {
				j.Connections = append(j.Connections, c.ID)
			}
			jobs = append(jobs, j)
		}
	}
	return jobs
}

// handOff queues sends as jobs (after delay), counting them; the change
// key is then the jobs' to finish, so Sent forgets it. Errors: the
// queue's; then no send counts as handed off and the caller retries.
func (p *Pusher) handOff(ctx context.Context, key string, sends []send, delay time.Duration) (err error) {
	if key != "" && p.Sent != nil {
		defer func() {
			if err == nil {
				p.Sent.forget(key)
			}
		}()
	}
	if len(sends) == 0 {
		return nil
	}
	if key == "" {
		key = p.Now().UTC().Format(time.RFC3339Nano)
	}
	per := p.JobConnections
	if per <= 0 || per > MaxJobConnections {
		per = MaxJobConnections
	}
	if err = p.Jobs.Enqueue(ctx, jobsOf(key, sends, per), delay); err != nil {
		return fmt.Errorf("realtime: hand %d sends to the fan-out queue: %w", len(sends), err)
	}
	p.count(ctx, MetricHandedOff, len(sends))
	return nil
}

func (p *Pusher) count(ctx context.Context, name string, n int) {
	if p.Metrics != nil && n > 0 {
		p.Metrics.Count(ctx, name, n)
	}
}

// RunJob sends job to its connections, as Push sends a change's, in the
// worker's time (its context's deadline less Reserve). What is left (the
// deadline came, or sends were throttled) is queued again as one job of the
// connections left, after a delay that grows with its attempts; past
// MaxJobAttempts those connections are counted as dropped and closed.
// Errors: the queue's, when what is left could not be queued (the caller
// retries the whole job; Sent skips the connections done).
func (p *Pusher) RunJob(ctx context.Context, job Job) error {
	stop, cut := p.stopTimes(ctx)
	sends := make([]send, 0, len(job.Connections))
	for _, id := range job.Connections {
		sends = append(sends, send{conn: Connection{ID: id, ChannelID: job.ChannelID}, data: job.Data, close: job.Close})
	}
	left := p.sendEach(ctx, job.Key, sends, stop, cut)
	if len(left) == 0 {
		return nil
	}
	next := job
	next.Attempt++
	next.Connections = next.Connections[:0:0]
	for _, s := range left {
		next.Connections = append(next.Connections, s.conn.ID)
	}
	if next.Attempt >= MaxJobAttempts {
		p.count(ctx, MetricDropped, len(left))
		for _, s := range left {
			p.closeDropped(ctx, s.conn)
		}
		return nil
	}
	// 1 s, 2 s, 4 s … at most a minute: throttling is per second.
	delay := min(time.Second<<min(next.Attempt-1, 6), time.Minute)
	if err := p.Jobs.Enqueue(context.WithoutCancel(ctx), []Job{next}, delay); err != nil {
		return fmt.Errorf("realtime: queue the %d sends left of job %s: %w", len(left), job.Key, err)
	}
	if p.Sent != nil {
		p.Sent.forget(job.Key)
	}
	return nil
}

// closeDropped closes a connection whose push was given up (its item goes
// with its $disconnect), so that its client reconnects with since.
func (p *Pusher) closeDropped(ctx context.Context, c Connection) {
	if err := p.Sender.Close(ctx, c.ID); err != nil {
		p.logWarn(ctx, "realtime: close a connection whose push was dropped", c.ID, err)
	}
}
