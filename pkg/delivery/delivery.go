package delivery

import (
	"bytes"
	"context"
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

// Statuses of a delivery.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Errors of an attempt, as the delivery log shows them.
const (
	ErrTimeout          = "timeout"
	ErrConnectionFailed = "connection_failed"
	ErrTargetNotAllowed = "target_not_allowed"
	DisabledGone        = "gone"
	DisabledFailing     = "failing"
	failingFor          = 24 * time.Hour
	failingAttempts     = 10
	responseDrainLimit  = 64 << 10
)

// Webhook is what an attempt needs of a webhook.
type Webhook struct {
	ID          string
	Kind        string
	WorkspaceID string
	Key         string
	URL         string
	Active      bool
	// Secrets are the signing secrets: the current one, then the previous
	// one while it has not expired.
	Secrets [][]byte
	// FailingSince is the first failed attempt since the last success, zero
	// when the last attempt succeeded; FailedAttempts counts them.
	FailingSince   time.Time
	FailedAttempts int
	// ReenabledAt is when an admin last re-enabled the webhook (zero when
	// never): events from before it are not delivered (contract section 11).
	ReenabledAt time.Time
}

// Attempt is one attempt's record: what the delivery log keeps.
type Attempt struct {
	Delivery events.Delivery
	// Number is the attempt's number (X-Service-Attempt).
	Number         int
	At             time.Time
	Status         string
	ResponseStatus int
	Error          string
	DurationMS     int64
	// NextAt is the next attempt's time when Status is pending.
	NextAt time.Time
	// Failed reports the attempt failed, which the webhook's failure
	// streak counts in the same write.
	Failed bool
}

// Store reads webhooks and records attempts.
type Store interface {
	// Webhook reads a webhook. Errors: ENotFound when it is gone.
	Webhook(ctx context.Context, kind, workspaceID, key string) (Webhook, error)
	// RecordAttempt writes a's delivery record with one call; a failed
	// attempt also extends the webhook's failure streak in that call.
	RecordAttempt(ctx context.Context, a Attempt) error
	// Disable sets the webhook inactive with reason. For DisabledFailing it
	// does so only if its streak still began before failingSince.
	Disable(ctx context.Context, w Webhook, reason string, failingBefore time.Time) error
	// ClearFailing ends the webhook's failure streak.
	ClearFailing(ctx context.Context, w Webhook) error
	// Event reads a stored envelope, for deliveries that refer to it.
	// Errors: ENotFound once it expired.
	Event(ctx context.Context, eventID string) ([]byte, error)
}

// Message is one received queue message.
type Message struct {
	Delivery events.Delivery
	// Receives is how many times the queue has handed this message out,
	// this time included.
	Receives int
	// Handle identifies the message to the queue.
	Handle string
}

// Queue delays a received message's next receive.
type Queue interface {
	// Delay makes the message visible again after d.
	Delay(ctx context.Context, handle string, d time.Duration) error
}

// Deliverer makes attempts.
type Deliverer struct {
	Store    Store
	Queue    Queue
	Client   *http.Client
	Schedule []time.Duration
	Now      func() time.Time
	// Rand returns uniform values in [0, 1) for the jitter.
	Rand func() float64
	// CacheTTL is how long a webhook's settings are reused.
	CacheTTL time.Duration

	mu     sync.Mutex
	cache  map[string]cached
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

type cached struct {
	w    Webhook
	read time.Time
}

// Result says what to do with a queue message: Done means delete it;
// otherwise it comes back (after the delay set, or the queue's own
// visibility timeout when setting it failed).
type Result struct {
	Done    bool
	Attempt *Attempt
}

func (d *Deliverer) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func cacheKey(kind, ws, key string) string { return kind + "|" + ws + "|" + key }

func (d *Deliverer) webhook(ctx context.Context, del events.Delivery) (Webhook, error) {
	k := cacheKey(del.Kind, del.WorkspaceID, del.WebhookKey)
	now := d.now()
	d.mu.Lock()
	c, ok := d.cache[k]
	d.mu.Unlock()
	if ok && now.Sub(c.read) < d.CacheTTL {
		return c.w, nil
	}
	w, err := d.Store.Webhook(ctx, del.Kind, del.WorkspaceID, del.WebhookKey)
	if err != nil {
		return Webhook{}, err
	}
	d.put(k, w, now)
	return w, nil
}

func (d *Deliverer) put(k string, w Webhook, read time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cache == nil {
		d.cache = map[string]cached{}
	}
	d.cache[k] = cached{w: w, read: read}
}

// update changes the cached copy of a webhook after this function changed
// the stored one, keeping its read time.
func (d *Deliverer) update(del events.Delivery, f func(*Webhook)) {
	k := cacheKey(del.Kind, del.WorkspaceID, del.WebhookKey)
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.cache[k]; ok {
		f(&c.w)
		d.cache[k] = c
	}
}

// Handle makes one attempt of m. A webhook that is gone or inactive drops
// the delivery. An error means nothing was attempted or recorded, and the
// message should come back.
func (d *Deliverer) Handle(ctx context.Context, m Message) (Result, error) {
	del := m.Delivery
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
	body, err := d.body(ctx, del)
	if chat.ErrorCode(err) == chat.ENotFound {
		slog.WarnContext(ctx, "delivery dropped: event expired", "delivery_id", del.ID, "event_id", del.EventID)
		return Result{Done: true}, nil
	}
	if err != nil {
		return Result{}, err
	}
	del.Body = body
	a := d.attempt(ctx, w, del, del.AttemptBase+max(m.Receives, 1))
	retry := false
	if a.Failed && a.Error != ErrTargetNotAllowed && a.ResponseStatus != http.StatusGone {
		if delay, ok := nextDelay(d.Schedule, max(m.Receives, 1), d.rand(), a.retryAfter); ok {
			a.Status, a.NextAt, retry = StatusPending, a.At.Add(delay), true
		}
	}
	if err := d.Store.RecordAttempt(ctx, a.Attempt); err != nil {
		return Result{}, err
	}
	if a.Failed {
		d.update(del, func(w *Webhook) {
			if w.FailingSince.IsZero() {
				w.FailingSince = a.At
			}
			w.FailedAttempts++
		})
	}
	d.afterAttempt(ctx, w, a)
	if retry {
		if err := d.Queue.Delay(ctx, m.Handle, a.NextAt.Sub(a.At)); err != nil {
			slog.WarnContext(ctx, "delivery: delay retry", "delivery_id", del.ID, "error", err.Error())
		}
		return Result{Attempt: &a.Attempt}, nil
	}
	return Result{Done: true, Attempt: &a.Attempt}, nil
}

func (d *Deliverer) rand() float64 {
	if d.Rand == nil {
		return 0.5
	}
	return d.Rand()
}

// afterAttempt changes the webhook when the attempt calls for it: a 410
// disables it; a failure that extends a streak of 24 hours and ten attempts
// disables it; a success ends a streak. The cached copy shows the stored
// streak as of its read plus this function's own attempts since.
func (d *Deliverer) afterAttempt(ctx context.Context, w Webhook, a attempted) {
	del := a.Delivery
	var err error
	switch {
	case a.ResponseStatus == http.StatusGone:
		err = d.Store.Disable(ctx, w, DisabledGone, time.Time{})
		d.update(del, func(w *Webhook) { w.Active = false })
	case a.Failed:
		since := w.FailingSince
		if since.IsZero() {
			since = a.At
		}
		if w.FailedAttempts+1 >= failingAttempts && !since.After(a.At.Add(-failingFor)) {
			err = d.Store.Disable(ctx, w, DisabledFailing, a.At.Add(-failingFor))
			if err == nil {
				d.update(del, func(w *Webhook) { w.Active = false })
			}
		}
	case !w.FailingSince.IsZero():
		err = d.Store.ClearFailing(ctx, w)
		d.update(del, func(w *Webhook) { w.FailingSince, w.FailedAttempts = time.Time{}, 0 })
	}
	if err != nil && chat.ErrorCode(err) != chat.EConflict {
		slog.WarnContext(ctx, "delivery: update webhook", "webhook_id", w.ID, "error", err.Error())
	}
}

type attempted struct {
	Attempt
	retryAfter time.Duration
}

// attempt posts the delivery once.
func (d *Deliverer) attempt(ctx context.Context, w Webhook, del events.Delivery, n int) attempted {
	start := d.now()
	a := attempted{Attempt: Attempt{Delivery: del, Number: n, At: start}}
	t := start.Unix()
	sigs := make([]string, 0, len(w.Secrets))
	for _, s := range w.Secrets {
		sigs = append(sigs, signature.Sign(s, t, del.Body))
	}
	ctx, cancel := context.WithTimeout(ctx, netguard.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(del.Body))
	if err != nil {
		a.Failed, a.Status, a.Error = true, StatusFailed, ErrConnectionFailed
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(signature.Header, signature.Format(t, sigs...))
	req.Header.Set(HeaderEvent, del.EventType)
	req.Header.Set(HeaderDelivery, del.ID)
	req.Header.Set(HeaderAttempt, strconv.Itoa(n))
	resp, err := d.Client.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, responseDrainLimit))
		resp.Body.Close()
	}
	a.DurationMS = d.now().Sub(start).Milliseconds()
	switch {
	case err != nil:
		a.Failed, a.Status, a.Error = true, StatusFailed, classify(err)
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		a.Status, a.ResponseStatus = StatusSucceeded, resp.StatusCode
	default:
		a.Failed, a.Status, a.ResponseStatus = true, StatusFailed, resp.StatusCode
		a.Error = fmt.Sprintf("http_%d", resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			a.retryAfter = retryAfter(resp.Header.Get("Retry-After"), start)
		}
	}
	return a
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
