package delivery

import (
	"context"
	"log/slog"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/jsonbody"
)

// RecoverStore finds and claims the failed deliveries a recovery queues.
type RecoverStore interface {
	// FailedDeliveries returns at most limit failed deliveries of a
	// webhook whose ids are timed within [since, until], oldest first,
	// reading those only: its cost grows with the window's failed
	// deliveries, not with the whole log of the window. It may lag the
	// records by a moment; ClaimFailed decides on the record itself.
	// Errors: EUnavailable.
	FailedDeliveries(ctx context.Context, workspaceID, webhookID string, since, until time.Time, limit int) ([]Record, error)
	// ClaimFailed sets rec pending, due at, provided it is still failed
	// with no attempt under way, and returns the attempts its record had
	// then (which may be more than rec's: FailedDeliveries may lag the
	// records); ok is false when it is not failed (another recovery or a
	// redelivery took it). Errors: EUnavailable.
	ClaimFailed(ctx context.Context, rec Record, at time.Time) (attempts int, ok bool, err error)
	// ReleaseClaim sets a claimed rec (Attempts as claimed) failed again:
	// its queue message was not sent. Errors: EUnavailable.
	ReleaseClaim(ctx context.Context, rec Record) error
}

// BatchSender queues deliveries, ten a call; it returns the indexes of
// those not sent.
type BatchSender interface {
	SendDeliveries(ctx context.Context, ds []events.Delivery) ([]int, error)
}

// MaxRecover bounds the deliveries one recovery queues, so that a call
// ends well within API Gateway's 29 s: calling again queues the rest (and
// nothing twice).
const MaxRecover = 1000

// Recoverer queues the failed deliveries of a webhook again (contract
// section 14).
type Recoverer struct {
	Store RecoverStore
	Queue BatchSender
	Now   chat.Clock
}

// Recover queues every failed delivery of webhook (of kind, in
// workspaceID) created within [since, until] (at most MaxRecover a call)
// as new attempts of the same deliveries: the same delivery id, attempt
// numbers continuing from the record's, a fresh schedule. Each is first
// claimed on its record (failed → pending), so that a repeated call while
// they are pending queues none twice; one whose message could not be sent
// is released (failed again) and not counted. webhook.test deliveries are
// never queued (a test is not retried). It returns how many it queued.
// Errors: EUnavailable.
func (r *Recoverer) Recover(ctx context.Context, workspaceID, kind, webhookID string, since, until time.Time) (int, error) {
	recs, err := r.Store.FailedDeliveries(ctx, workspaceID, webhookID, since, until, MaxRecover)
	if err != nil {
		return 0, err
	}
	now := r.Now()
	var (
		claimed []Record
		ds      []events.Delivery
	)
	for _, rec := range recs {
		if rec.Kind != kind || rec.EventType == events.WebhookTest {
			continue
		}
		n, ok, err := r.Store.ClaimFailed(ctx, rec, now)
		if err != nil {
			r.release(ctx, claimed)
			return 0, err
		}
		if !ok {
			continue
		}
		rec.Attempts = n
		claimed = append(claimed, rec)
		// By reference: the delivery function reads the stored envelope
		// once per event, so a recovery reads none.
		ds = append(ds, events.Delivery{ID: rec.ID, WebhookID: rec.WebhookID, Kind: rec.Kind, WorkspaceID: rec.WorkspaceID,
			WebhookKey: rec.WebhookKey, EventID: rec.EventID, EventType: rec.EventType, AttemptBase: max(rec.Attempts, 1)})
	}
	if len(ds) == 0 {
		return 0, nil
	}
	failed, err := r.Queue.SendDeliveries(ctx, ds)
	if len(failed) > 0 {
		slog.WarnContext(ctx, "recover: deliveries not queued", "webhook_id", webhookID, "count", len(failed), "error", errText(err))
		var back []Record
		for _, i := range failed {
			back = append(back, claimed[i])
		}
		r.release(ctx, back)
		if len(failed) == len(ds) {
			return 0, chat.Unavailable(err)
		}
	}
	return len(ds) - len(failed), nil
}

func (r *Recoverer) release(ctx context.Context, recs []Record) {
	for _, rec := range recs {
		if err := r.Store.ReleaseClaim(ctx, rec); err != nil {
			// It stays pending with no message: a redelivery or the
			// delivery log's retention ends it.
			slog.WarnContext(ctx, "recover: release claim", "delivery_id", rec.ID, "error", err.Error())
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// RecoverWindow reads a recovery's body: since (required) and until
// (optional, default now), RFC 3339, since within chat.DeliveryRetention before now and
// before until; an until in the future is now. Errors: EValidation on the
// field at fault.
func RecoverWindow(obj jsonbody.Object, now time.Time) (since, until time.Time, err error) {
	var v chat.Validation
	s, ok := obj.String(&v, "since", "since")
	switch {
	case v.Has("since"):
	case !ok:
		v.Add("since", "The since field is required.")
	default:
		if since, err = time.Parse(time.RFC3339, s); err != nil {
			v.Add("since", "The since field must be an RFC 3339 time.")
		} else if since.Before(now.Add(-chat.DeliveryRetention)) {
			v.Add("since", "The since field must be within the last 30 days (the delivery log's retention).")
		}
	}
	until = now
	if u, ok := obj.String(&v, "until", "until"); ok {
		t, perr := time.Parse(time.RFC3339, u)
		switch {
		case perr != nil:
			v.Add("until", "The until field must be an RFC 3339 time.")
		case !v.Has("since") && !t.After(since):
			v.Add("until", "The until field must be after since.")
		case t.Before(now):
			until = t
		}
	}
	if v.Err() == nil && !since.Before(until) {
		v.Add("since", "The since field must be in the past.")
	}
	if err := v.Err(); err != nil {
		return time.Time{}, time.Time{}, err
	}
	return since, until, nil
}
