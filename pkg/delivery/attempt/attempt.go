package attempt

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/netguard"
	"github.com/chatbridge/chat/pkg/signature"
)

// Request headers of a delivery.
const (
	UserAgent      = "ChatService-Webhooks/1"
	HeaderEvent    = "X-Service-Event"
	HeaderDelivery = "X-Service-Delivery"
	HeaderAttempt  = "X-Service-Attempt"
)

// Errors of an attempt, as the delivery log shows them.
const (
	ErrTimeout          = "timeout"
	ErrConnectionFailed = "connection_failed"
	ErrTargetNotAllowed = "target_not_allowed"
	failingFor          = 24 * time.Hour
	failingAttempts     = 10
	responseDrainLimit  = 64 << 10
)

// Deliverer makes attempts.
type Deliverer struct {
	Store delivery.Store
	// Queue is the delivery queue (the fast lane): every delivery starts
	// there.
	Queue delivery.Queue
	// Slow is the slow lane's queue, nil for none. A delivery read from the
	// fast lane whose webhook has a failure streak or a slow mark is moved
	// to it, and
	// every retry of a failed attempt is sent to it, so that receivers that
	// time out occupy only the slow lane's instances.
	Slow delivery.Queue
	// Wait is the wait lane's queue, nil for none. A message not yet due (a
	// retry waiting out its schedule, a copy received early) waits there,
	// sent again every MaxQueueDelay, and once due goes on to the lane it
	// is attempted on (a retry to the slow lane, a first attempt to the
	// fast one). Nothing is attempted on it, so waiting retries, however
	// many, never take an attempt's place on either lane.
	Wait delivery.Queue
	// LaneOf tells the lane of a record by its eventSourceARN; nil (or
	// LaneOther) means the record is attempted where it is.
	LaneOf   func(eventSourceARN string) delivery.Lane
	Client   *http.Client
	Schedule []time.Duration
	Now      func() time.Time
	// Rand returns uniform values in [0, 1) for the jitter.
	Rand func() float64
	// LeaseFor is how long a reserved attempt number is held before
	// another message may take it over (DefaultLease when zero).
	LeaseFor time.Duration
	// Limiter keeps webhooks' rate_limit; nil keeps none.
	Limiter delivery.Limiter
	// Marker marks a webhook whose attempt is still waiting after
	// SlowAfter (DefaultSlowAfter when zero), so that its next deliveries
	// go to the slow lane without waiting for the timeout; nil (or no slow
	// lane) marks none.
	Marker    delivery.SlowMarker
	SlowAfter time.Duration
	// Messages, when set, is asked before each attempt of an event that
	// carries a message whether it was deleted since; such an event is
	// sent with the message scrubbed (events.Scrub). The function's wiring
	// always sets it.
	Messages delivery.MessageStates
	// Timeout bounds one attempt's request, from the connection to the
	// answer (netguard.Timeout, the contract's 10 s, when zero): an
	// attempt still waiting then failed with "timeout". Tests shorten it.
	Timeout time.Duration

	mu     sync.Mutex
	bodies map[string][]byte
}

// maxCachedBodies bounds the envelopes of large events kept in memory
// (about 256 KiB each), which the deliveries of one event to several
// webhooks share.
const maxCachedBodies = 32

// body returns a delivery's envelope: carried, cached, or read once.
func (d *Deliverer) body(ctx context.Context, del events.Delivery) ([]byte, error) {
	if del.Body != nil {
		return del.Body, nil
	}
	d.mu.Lock()
	b, ok := d.bodies[del.EventID]
	d.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := d.Store.Event(ctx, del.EventID)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bodies == nil || len(d.bodies) >= maxCachedBodies {
		d.bodies = map[string][]byte{}
	}
	d.bodies[del.EventID] = b
	return b, nil
}

// Result says what to do with a queue message: Done means delete it;
// otherwise it comes back (after the delay set, or the queue's own
// visibility timeout when setting it failed).
type Result struct {
	Done    bool
	Attempt *delivery.Attempt
	// Moved reports the message was sent to another lane unattempted (the
	// slow lane, or from the wait lane to the lane it is attempted on).
	Moved bool
}

// here is the queue a message read from lane goes back to when it waits
// (before its due time, for its rate limit, for an attempt holding its
// record): the lane it came from.
func (d *Deliverer) here(lane delivery.Lane) delivery.Queue {
	if lane == delivery.LaneSlow && d.Slow != nil {
		return d.Slow
	}
	return d.Queue
}

// retries is the queue of a failed attempt's retry: the slow lane when
// there is one.
func (d *Deliverer) retries() delivery.Queue {
	if d.Slow != nil {
		return d.Slow
	}
	return d.Queue
}

// waiting is the queue a message read from lane waits on until its due
// time: the wait lane when there is one, else the lane it came from.
func (d *Deliverer) waiting(lane delivery.Lane) delivery.Queue {
	if d.Wait != nil {
		return d.Wait
	}
	return d.here(lane)
}

// retryQueue is the queue of a retry due after delay: the wait lane while
// it must wait (and there is one), else the retries' lane.
func (d *Deliverer) retryQueue(delay time.Duration) delivery.Queue {
	if d.Wait != nil && delay >= dueSlack {
		return d.Wait
	}
	return d.retries()
}

// attemptQueue is the lane a due message from the wait lane is attempted
// on: a retry's (the slow lane), or the fast lane for a first attempt (of
// a delivery, a redelivery or a recovery).
func (d *Deliverer) attemptQueue(del events.Delivery) delivery.Queue {
	if del.Attempt > del.AttemptBase+1 {
		return d.retries()
	}
	return d.Queue
}

// slowLane reports whether w's deliveries belong on the slow lane: it has
// a failure streak (an attempt failed and no success ended the streak
// since), or an attempt to it was marked slow and none succeeded since.
func slowLane(w delivery.Webhook) bool {
	return w.FailedAttempts > 0 || !w.FailingSince.IsZero() || !w.SlowSince.IsZero()
}

// DefaultSlowAfter is how long an attempt waits for its receiver before
// its webhook is marked slow: a tenth of the 10 s timeout, so that a
// receiver that starts timing out keeps a tenth as many deliveries on the
// fast lane as it would until its first timeout is recorded.
const DefaultSlowAfter = time.Second

func (d *Deliverer) slowAfter() time.Duration {
	if d.SlowAfter > 0 {
		return d.SlowAfter
	}
	return DefaultSlowAfter
}

func (d *Deliverer) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// webhook reads the delivery's webhook for this attempt, never from a
// cache: a changed url, secret or active flag, or a deletion, applies to
// the next attempt after the change answered (contract section 10). One
// consistent GetItem, made only for a message that is due.
func (d *Deliverer) webhook(ctx context.Context, del events.Delivery) (delivery.Webhook, error) {
	return d.Store.Webhook(ctx, del.Kind, del.WorkspaceID, del.WebhookKey)
}

// DefaultLease holds a reserved attempt number for longer than the
// delivery function can run (its 30 s timeout) and less than the queue's
// visibility timeout (180 s), so that a message whose function died
// comes back to a number it can take over.
const DefaultLease = time.Minute

// dueSlack is SQS's delay granularity: a message due within it is due.
const dueSlack = time.Second

// holdWait is how long a message waits on the queue for an attempt that
// holds its delivery's record: most end within milliseconds.
const holdWait = 2 * time.Second

// Handle makes the attempt m asks for, once it is due. A message received
// early is sent again for the rest of its wait (at most MaxQueueDelay), so
// that no message waits in flight. A webhook that is gone or inactive
// drops the delivery. A message read from the fast lane whose webhook has
// a failure streak or a slow mark is moved to the slow lane as it is (one
// SendMessage; no attempt number taken, nothing counted as failed). The attempt number is
// reserved on the delivery record before the POST: a message whose number
// is taken is a duplicate (dropped), or waits for the attempt holding the
// record. A failed attempt to retry sends the next attempt's message (to
// the slow lane) before its result is recorded, so that a failed write
// loses no retry. An error means nothing was attempted and the message
// should come back.
func (d *Deliverer) Handle(ctx context.Context, m delivery.Message) (Result, error) {
	del := m.Delivery
	now := d.now()
	if wait := del.Due.Sub(now); wait >= dueSlack {
		if err := d.waiting(m.Lane).Schedule(ctx, del, min(wait, delivery.MaxQueueDelay)); err != nil {
			return Result{}, err
		}
		return Result{Done: true}, nil
	}
	if m.Lane == delivery.LaneWait {
		// Due: on to the lane it is attempted on, as it is.
		if err := d.attemptQueue(del).Schedule(ctx, del, 0); err != nil {
			return Result{}, err
		}
		return Result{Done: true, Moved: true}, nil
	}
	w, err := d.webhook(ctx, del)
	if chat.ErrorCode(err) == chat.ENotFound {
		slog.InfoContext(ctx, "delivery dropped: webhook deleted", "delivery_id", del.ID, "webhook_id", del.WebhookID)
		return Result{Done: true}, nil
	}
	if err != nil {
		return Result{}, err
	}
	if !w.Active {
		slog.InfoContext(ctx, "delivery dropped: webhook inactive", "delivery_id", del.ID, "webhook_id", del.WebhookID)
		return Result{Done: true}, nil
	}
	if at, ok := events.IDTime(del.EventID); ok && del.AttemptBase == 0 && at.Before(w.ReenabledAt) {
		// Re-enabling sends only new events; an admin's redelivery still
		// sends an old one.
		slog.InfoContext(ctx, "delivery dropped: event from before the webhook was re-enabled", "delivery_id", del.ID, "webhook_id", del.WebhookID)
		return Result{Done: true}, nil
	}
	if m.Lane == delivery.LaneFast && d.Slow != nil && slowLane(w) {
		// The same message, attempt number and all, goes on in the slow
		// lane; a failed send leaves it here to come back (never dropped).
		if err := d.Slow.Schedule(ctx, del, 0); err != nil {
			return Result{}, err
		}
		slog.InfoContext(ctx, "delivery moved to the slow lane", "delivery_id", del.ID, "webhook_id", del.WebhookID,
			"attempt", del.Attempt, "failed_attempts", w.FailedAttempts, "slow_since", !w.SlowSince.IsZero())
		return Result{Done: true, Moved: true}, nil
	}
	if wait, err := d.overLimit(ctx, w, now); err != nil || wait > 0 {
		// Past the rate limit: the same message, attempt number and all,
		// waits on the queue; nothing is attempted or counted as failed.
		if err == nil {
			err = d.here(m.Lane).Schedule(ctx, del, wait)
		}
		return Result{Done: err == nil}, err
	}
	body, err := d.body(ctx, del)
	if chat.ErrorCode(err) == chat.ENotFound {
		slog.WarnContext(ctx, "delivery dropped: event expired", "delivery_id", del.ID, "event_id", del.EventID)
		return Result{Done: true}, nil
	}
	if err != nil {
		return Result{}, err
	}
	if body, err = d.current(ctx, del, body); err != nil {
		return Result{}, err
	}
	if del.Body != nil {
		del.Body = body // its retry carries what is sent
	}
	want := del.Attempt
	if want == 0 && del.AttemptBase == 0 {
		want = 1 // the delivery's first attempt
	}
	lease := delivery.Lease{Until: now.Add(d.leaseFor()), Token: rand.Text()}
	n, ok, st, err := d.Store.Reserve(ctx, delivery.Reservation{Delivery: del, Number: want, At: now, Lease: lease})
	if err != nil {
		return Result{}, err
	}
	if !ok {
		return d.refused(ctx, m.Lane, del, want, st, now)
	}
	next := del // the next attempt's message: inline or by reference, as received
	if del.Attempt == 0 && del.AttemptBase > 0 {
		next.AttemptBase = n - 1 // a redelivery's run starts at the number it got
	}
	del.Body = body
	a := d.attempt(ctx, w, del, n)
	a.Lease = lease
	retry := false
	if a.Failed && a.Error != ErrTargetNotAllowed && a.ResponseStatus != http.StatusGone {
		if delay, ok := nextDelay(d.Schedule, n-next.AttemptBase, d.rand(), a.retryAfter); ok {
			// The schedule's delay runs from the failure, not from the
			// attempt's start: a 5 s step after a 10 s timeout was due
			// before the attempt ended, so its retry went out at once and
			// its reservation replaced the timeout in the log.
			a.Status, a.NextAt, retry = delivery.StatusPending, a.ended.Add(delay), true
		}
	}
	queued := true
	if retry {
		next.Attempt, next.Due = n+1, a.NextAt
		delay := a.NextAt.Sub(d.now())
		if err := d.retryQueue(delay).Schedule(ctx, next, min(delay, delivery.MaxQueueDelay)); err != nil {
			// This message comes back and queues it (refused, below).
			slog.WarnContext(ctx, "delivery: queue retry", "delivery_id", del.ID, "attempt", n+1, "error", err.Error())
			queued = false
		} else {
			a.Queued = n + 1
		}
	}
	if err := d.Store.RecordAttempt(ctx, a.Attempt); err != nil {
		// The attempt stays in the log as pending; its retry is queued.
		slog.WarnContext(ctx, "delivery: record attempt", "delivery_id", del.ID, "attempt", n, "error", err.Error())
	}
	d.afterAttempt(ctx, w, a)
	return Result{Done: queued, Attempt: &a.Attempt}, nil
}

// current returns the envelope to send now: body, or, for an event that
// carries a message deleted since, body with the message scrubbed (the
// contract's "deleted means gone": whichever path queued it, a first
// delivery, a retry, a redelivery or a recovery). It costs one consistent
// GetItem of the message an attempt, for those events only, made just
// before the attempt's reservation and POST, so that a deletion answered
// before it is seen; a failed read makes no attempt (the message comes
// back).
func (d *Deliverer) current(ctx context.Context, del events.Delivery, body []byte) ([]byte, error) {
	if d.Messages == nil || !events.CarriesMessage(del.EventType) {
		return body, nil
	}
	ref, ok := events.MessageRefOf(body)
	if !ok || ref.Deleted {
		return body, nil
	}
	at, err := d.Messages.DeletedAt(ctx, ref.ChannelID, ref.ID)
	if err != nil || at.IsZero() {
		return body, err
	}
	slog.InfoContext(ctx, "delivery: its message was deleted; sent scrubbed", "delivery_id", del.ID, "event_type", del.EventType, "message_id", ref.ID)
	return events.Scrub(body, at)
}

// refused decides what a message whose attempt number want (0: the next)
// was not free does: wait for the attempt that holds the record, queue a
// retry that a failed send lost, or drop a duplicate.
func (d *Deliverer) refused(ctx context.Context, lane delivery.Lane, del events.Delivery, want int, st delivery.State, now time.Time) (Result, error) {
	if st.LeaseUntil.After(now) && (want == 0 || st.Attempts == want) {
		// Another message's attempt holds the record (a copy of this one,
		// or any for a redelivery): come back once it has likely ended (a
		// holder that died lets go when its lease expires).
		wait := max(min(st.LeaseUntil.Sub(now), holdWait), dueSlack)
		if err := d.here(lane).Schedule(ctx, del, wait); err != nil {
			return Result{}, err
		}
		return Result{Done: true}, nil
	}
	if want > 0 && st.Attempts < want-1 {
		slog.WarnContext(ctx, "delivery dropped: record behind the attempt", "delivery_id", del.ID, "attempt", want, "recorded", st.Attempts)
		return Result{Done: true}, nil
	}
	if want > 0 && st.LeaseUntil.IsZero() && st.Status == delivery.StatusPending && !st.NextAt.IsZero() && st.Queued <= st.Attempts {
		// The last attempt's retry was never queued (its send failed, or an
		// earlier version retried by visibility): this message queues it.
		retry := del
		retry.Attempt, retry.Due = st.Attempts+1, st.NextAt
		delay := max(st.NextAt.Sub(now), 0)
		if err := d.retryQueue(delay).Schedule(ctx, retry, min(delay, delivery.MaxQueueDelay)); err != nil {
			return Result{}, err
		}
		return Result{Done: true}, nil
	}
	slog.InfoContext(ctx, "delivery: duplicate dropped", "delivery_id", del.ID, "attempt", want, "recorded", st.Attempts)
	return Result{Done: true}, nil
}

func (d *Deliverer) leaseFor() time.Duration {
	if d.LeaseFor > 0 {
		return d.LeaseFor
	}
	return DefaultLease
}

func (d *Deliverer) rand() float64 {
	if d.Rand == nil {
		return 0.5
	}
	return d.Rand()
}

// afterAttempt changes the webhook when the attempt calls for it: a 410
// disables it; a failure extends its streak, and disables it when the
// streak has run 24 hours and ten attempts; a success ends a streak and a
// slow mark (this attempt's or an earlier one's). Each
// is a write of its own after the attempt's record and retry, so that no
// failure here loses either. w is the webhook as this attempt read it.
func (d *Deliverer) afterAttempt(ctx context.Context, w delivery.Webhook, a attempted) {
	var err error
	switch {
	case a.ResponseStatus == http.StatusGone:
		err = d.Store.Disable(ctx, w, delivery.DisabledGone, time.Time{})
	case a.Failed:
		since := w.FailingSince
		if since.IsZero() {
			since = a.At
		}
		// Disabling needs ten counted failures; more would only contend
		// for the webhook item, so a streak known to hold ten is not
		// written again.
		if w.FailedAttempts < failingAttempts {
			if err := d.Store.ExtendFailing(ctx, w, a.At); err != nil {
				slog.WarnContext(ctx, "delivery: extend failure streak", "webhook_id", w.ID, "error", err.Error())
			}
		}
		if w.FailedAttempts+1 >= failingAttempts && !since.After(a.At.Add(-failingFor)) {
			err = d.Store.Disable(ctx, w, delivery.DisabledFailing, a.At.Add(-failingFor))
		}
	case !w.FailingSince.IsZero() || !w.SlowSince.IsZero() || a.marked:
		err = d.Store.ClearFailing(ctx, w)
	}
	if err != nil && chat.ErrorCode(err) != chat.EConflict {
		slog.WarnContext(ctx, "delivery: update webhook", "webhook_id", w.ID, "error", err.Error())
	}
}

type attempted struct {
	delivery.Attempt
	retryAfter time.Duration
	// marked reports this attempt marked its webhook slow.
	marked bool
	// ended is when the attempt's answer (or failure) came.
	ended time.Time
}

func (d *Deliverer) timeout() time.Duration {
	if d.Timeout > 0 {
		return d.Timeout
	}
	return netguard.Timeout
}

// attempt posts the delivery once.
func (d *Deliverer) attempt(ctx context.Context, w delivery.Webhook, del events.Delivery, n int) attempted {
	start := d.now()
	a := attempted{Attempt: delivery.Attempt{Delivery: del, Number: n, At: start}}
	t := start.Unix()
	sigs := make([]string, 0, len(w.Secrets))
	for _, s := range w.Secrets {
		sigs = append(sigs, signature.Sign(s, t, del.Body))
	}
	std := standardHeaders(w.Secrets, del.ID, t, del.Body)
	ctx, cancel := context.WithTimeout(ctx, d.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(del.Body))
	if err != nil {
		a.Failed, a.Status, a.Error, a.ended = true, delivery.StatusFailed, ErrConnectionFailed, start
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(signature.Header, signature.Format(t, sigs...))
	req.Header.Set(HeaderEvent, del.EventType)
	req.Header.Set(HeaderDelivery, del.ID)
	req.Header.Set(HeaderAttempt, strconv.Itoa(n))
	std.set(req.Header)
	stopMark := d.markIfSlow(ctx, w, &a)
	resp, err := d.Client.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, responseDrainLimit))
		resp.Body.Close()
	}
	stopMark()
	a.ended = d.now()
	a.DurationMS = a.ended.Sub(start).Milliseconds()
	switch {
	case err != nil:
		a.Failed, a.Status, a.Error = true, delivery.StatusFailed, classify(err)
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		a.Status, a.ResponseStatus = delivery.StatusSucceeded, resp.StatusCode
	default:
		a.Failed, a.Status, a.ResponseStatus = true, delivery.StatusFailed, resp.StatusCode
		a.Error = fmt.Sprintf("http_%d", resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			a.retryAfter = retryAfter(resp.Header.Get("Retry-After"), a.ended)
		}
	}
	return a
}

// markIfSlow marks w slow if the attempt a is still waiting after
// SlowAfter, with one write made while the request goes on (the attempt
// keeps its whole timeout). Only with a slow lane, and only for a webhook
// not on it already. The returned stop ends the wait and, when the mark
// was started, waits for its write, so that a success after it clears it.
func (d *Deliverer) markIfSlow(ctx context.Context, w delivery.Webhook, a *attempted) (stop func()) {
	if d.Marker == nil || d.Slow == nil || slowLane(w) {
		return func() {}
	}
	done := make(chan struct{})
	t := time.AfterFunc(d.slowAfter(), func() {
		defer close(done)
		at := d.now()
		if err := d.Marker.MarkSlow(context.WithoutCancel(ctx), w, at); err != nil {
			slog.WarnContext(ctx, "delivery: mark webhook slow", "webhook_id", w.ID, "error", err.Error())
			return
		}
		a.marked = true
		slog.InfoContext(ctx, "delivery: webhook marked slow", "webhook_id", w.ID, "delivery_id", a.Delivery.ID)
	})
	return func() {
		if !t.Stop() {
			<-done
		}
	}
}

// classify names a failed request's cause.
func classify(err error) string {
	if errors.Is(err, netguard.ErrNotAllowed) {
		return ErrTargetNotAllowed
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return ErrTimeout
	}
	return ErrConnectionFailed
}
