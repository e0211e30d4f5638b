package relay

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/chatbridge/chat/pkg/awsenv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
)

// Sweep defaults.
const (
	// DefaultMaxAttempts is how many times the sweep queues one message
	// again before it gives up on it and raises the alarm.
	DefaultMaxAttempts = 5
	// DefaultBackoff is the wait after the first re-queue; it doubles with
	// every attempt (15 min, 30 min, 1 h, 2 h, 4 h), so the five attempts
	// span about eight hours.
	DefaultBackoff = 15 * time.Minute
	// DefaultSweepLimit bounds the messages one run handles; the rest wait
	// for the next run, minutes later.
	DefaultSweepLimit = 500
)

// PendingStore is the storage the sweep needs: the untranslated markers
// that are due, and two ways to move one.
type PendingStore interface {
	// DuePending returns at most limit marked messages whose marker is due
	// at now.
	DuePending(ctx context.Context, now time.Time, limit int) ([]messages.Pending, error)
	// Requeued records one more attempt on p's marker and makes it due
	// again at next. A marker that changed since p was read is left alone,
	// without an error.
	Requeued(ctx context.Context, p messages.Pending, next time.Time) error
	// GiveUp takes p's marker out of the sweep's reach, for an operator to
	// find. A marker that changed since p was read is left alone.
	GiveUp(ctx context.Context, p messages.Pending) error
}

// Sweep queues again the messages that were accepted but whose translation
// has not finished long after (their marker is due): a relay or a queue
// that failed longer than the stream keeps records, a record set aside as
// poison, a job that went to the dead-letter queue. Each message is queued
// again at most MaxAttempts times, with a doubling backoff; then the sweep
// gives up on it, logs it as an error and counts it in the
// TranslationSweepGaveUp metric, which raises an alarm.
type Sweep struct {
	Store PendingStore
	Queue Sender
	// Now is the clock; time.Now when nil.
	Now chat.Clock
	// MaxAttempts, Backoff and Limit default to DefaultMaxAttempts,
	// DefaultBackoff and DefaultSweepLimit when zero.
	MaxAttempts int
	Backoff     time.Duration
	Limit       int
	// Metrics, when set, records each run's counts.
	Metrics awsenv.MetricRecorder
}

// SweepResult counts what one run did.
type SweepResult struct {
	// Due is the number of due markers read.
	Due int `json:"due"`
	// Requeued were sent to the queue again.
	Requeued int `json:"requeued"`
	// Poisoned were refused by the queue for good; each counts as an attempt.
	Poisoned int `json:"poisoned"`
	// GaveUp had used every attempt and were set aside.
	GaveUp int `json:"gave_up"`
	// Retry could not be sent or recorded now; the next run tries again
	// without counting an attempt.
	Retry int `json:"retry"`
}

// Run sweeps once. Errors: the store's, when the due markers cannot be
// read; every other failure is counted in Retry and left to the next run.
func (s *Sweep) Run(ctx context.Context) (SweepResult, error) {
	now := s.now()
	due, err := s.Store.DuePending(ctx, now, s.limit())
	if err != nil {
		return SweepResult{}, fmt.Errorf("relay: sweep: %w", err)
	}
	res := SweepResult{Due: len(due)}
	var send []messages.Pending
	for _, p := range due {
		if p.Attempts < s.maxAttempts() {
			send = append(send, p)
			continue
		}
		if err := s.Store.GiveUp(ctx, p); err != nil {
			res.Retry++
			slog.WarnContext(ctx, "relay: sweep: give up", "message_id", p.Job.MessageID, "error", err.Error())
			continue
		}
		res.GaveUp++
		slog.ErrorContext(ctx, "relay: sweep gave up on a message: its translation never finished",
			"message_id", p.Job.MessageID, "channel_id", p.Job.ChannelID, "attempts", p.Attempts)
	}
	if len(send) > 0 {
		jobs := make([]messages.Job, len(send))
		for i, p := range send {
			jobs[i] = p.Job
		}
		sent, err := s.Queue.SendJobs(ctx, jobs)
		if err != nil {
			slog.WarnContext(ctx, "relay: sweep: send jobs", "jobs", len(jobs), "error", err.Error())
		}
		retry := make(map[int]bool, len(sent.Retry))
		for _, i := range sent.Retry {
			retry[i] = true
		}
		for i, p := range send {
			if retry[i] {
				res.Retry++
				continue
			}
			if cause, ok := sent.Poison[i]; ok {
				res.Poisoned++
				slog.ErrorContext(ctx, "relay: sweep: the queue refused a message's job", "message_id", p.Job.MessageID,
					"attempts", p.Attempts+1, "error", cause.Error())
			}
			// Sent or refused for good, it was an attempt.
			if err := s.Store.Requeued(ctx, p, now.Add(s.backoff(p.Attempts))); err != nil {
				res.Retry++
				slog.WarnContext(ctx, "relay: sweep: record attempt", "message_id", p.Job.MessageID, "error", err.Error())
				continue
			}
			if _, ok := sent.Poison[i]; !ok {
				res.Requeued++
			}
		}
	}
	if s.Metrics != nil {
		s.Metrics.Record(ctx,
			awsenv.Metric{Name: "TranslationSweepRequeued", Unit: awsenv.UnitCount, Value: float64(res.Requeued)},
			awsenv.Metric{Name: "TranslationSweepPoisoned", Unit: awsenv.UnitCount, Value: float64(res.Poisoned)},
			awsenv.Metric{Name: "TranslationSweepGaveUp", Unit: awsenv.UnitCount, Value: float64(res.GaveUp)})
	}
	slog.InfoContext(ctx, "sweep", "due", res.Due, "requeued", res.Requeued, "poisoned", res.Poisoned,
		"gave_up", res.GaveUp, "retry", res.Retry)
	return res, nil
}

// HandleSchedule is the Lambda handler of the sweep's schedule: the event
// says only that it is time.
func (s *Sweep) HandleSchedule(ctx context.Context, _ events.CloudWatchEvent) (SweepResult, error) {
	return s.Run(ctx)
}

// backoff is the wait after a message's attempts-th re-queue: Backoff,
// doubled per earlier attempt, at most a day.
func (s *Sweep) backoff(attempts int) time.Duration {
	d := s.Backoff
	if d <= 0 {
		d = DefaultBackoff
	}
	for i := 0; i < attempts && d < 24*time.Hour; i++ {
		d *= 2
	}
	return min(d, 24*time.Hour)
}

func (s *Sweep) maxAttempts() int {
	if s.MaxAttempts > 0 {
		return s.MaxAttempts
	}
	return DefaultMaxAttempts
}

func (s *Sweep) limit() int {
	if s.Limit > 0 {
		return s.Limit
	}
	return DefaultSweepLimit
}

func (s *Sweep) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}
