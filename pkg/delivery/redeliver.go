package delivery

import (
	"context"
	"log/slog"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/events"
)

// Bounds of redelivery (docs/decisions.md, "Redelivery bounded").
const (
	// RedeliveryLimit is how many redeliveries a webhook takes in one
	// RedeliveryWindow; more get 429 rate_limited.
	RedeliveryLimit  = 10
	RedeliveryWindow = time.Minute
	// RedeliveryPendingFor is how long a queued redelivery holds its
	// delivery (409 redelivery_pending) if the delivery function never
	// takes it (its webhook was disabled, say); taking it ends the hold.
	RedeliveryPendingFor = 5 * time.Minute
)

// Claim is the outcome of a redelivery claim.
type Claim int

// Claims of RedeliverStore.ClaimRedelivery.
const (
	// Claimed: the delivery holds a pending redelivery until the claim's
	// Until, counted in the webhook's window.
	Claimed Claim = iota
	// ClaimPending: a redelivery of the delivery is pending; nothing was
	// written.
	ClaimPending
	// ClaimLimited: the webhook's window holds its limit; nothing was
	// written.
	ClaimLimited
)

// RedeliveryClaim asks to mark a delivery's redelivery pending and count it
// in its webhook's window, both or neither.
type RedeliveryClaim struct {
	WorkspaceID, WebhookID, DeliveryID string
	Now, Until                         time.Time
	// Window is the start of the counting window; Limit its most.
	Window time.Time
	Limit  int
}

// RedeliverStore reads what a redelivery repeats.
type RedeliverStore interface {
	// Delivery reads a webhook's delivery record. Errors: ENotFound.
	Delivery(ctx context.Context, workspaceID, webhookID, deliveryID string) (Record, error)
	// Event reads an event's envelope as first sent. Errors: ENotFound.
	Event(ctx context.Context, eventID string) ([]byte, error)
	// EventWebhookOf checks that webhook id of kind exists in workspace.
	// Errors: ENotFound when it does not (or was deleted); EUnavailable.
	EventWebhookOf(ctx context.Context, workspaceID, kind, id string) error
	// ClaimRedelivery writes c with one atomic write. Errors: ENotFound
	// when the delivery record is gone; EUnavailable.
	ClaimRedelivery(ctx context.Context, c RedeliveryClaim) (Claim, error)
	// ReleaseRedelivery ends a claim whose message was not sent.
	ReleaseRedelivery(ctx context.Context, workspaceID, webhookID, deliveryID string) error
}

// Sender queues one delivery.
type Sender interface {
	SendDelivery(ctx context.Context, d events.Delivery) error
}

// Redeliverer queues a new attempt of a recorded delivery.
type Redeliverer struct {
	Store RedeliverStore
	Queue Sender
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Redeliver queues a new attempt of delivery id of the kind's webhook in
// workspace, whatever its status: same delivery id, the same envelope,
// attempt numbers continuing from the record's, and a schedule of its own.
// One redelivery of a delivery is pending at a time, and a webhook takes at
// most RedeliveryLimit in a RedeliveryWindow. Errors: ENotFound for an
// unknown (or other kind's, or expired) delivery or a deleted webhook;
// ERedeliveryPending; ERateLimited (with RetryAfter); EUnavailable.
func (r *Redeliverer) Redeliver(ctx context.Context, workspaceID, kind, webhookID, id string) error {
	if !chat.ValidID(webhookID) || !chat.ValidID(id) {
		return chat.Errorf(chat.ENotFound, "no delivery %q", id)
	}
	rec, err := r.Store.Delivery(ctx, workspaceID, webhookID, id)
	if err != nil {
		return err
	}
	if rec.Kind != kind {
		return chat.Errorf(chat.ENotFound, "no %s delivery %s", kind, id)
	}
	// A deleted webhook gets no further attempt (contract section 10).
	if err := r.Store.EventWebhookOf(ctx, workspaceID, kind, webhookID); err != nil {
		return err
	}
	body, err := r.Store.Event(ctx, rec.EventID)
	if err != nil {
		return err
	}
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	window := now.Truncate(RedeliveryWindow)
	claim, err := r.Store.ClaimRedelivery(ctx, RedeliveryClaim{WorkspaceID: workspaceID, WebhookID: webhookID, DeliveryID: id,
		Now: now, Until: now.Add(RedeliveryPendingFor), Window: window, Limit: RedeliveryLimit})
	switch {
	case err != nil:
		return err
	case claim == ClaimPending:
		return chat.Errorf(chat.ERedeliveryPending, "A redelivery of this delivery is already queued.")
	case claim == ClaimLimited:
		e := chat.Errorf(chat.ERateLimited, "This webhook takes at most %d redeliveries a minute. Retry later.", RedeliveryLimit)
		e.RetryAfter = max(1, int(window.Add(RedeliveryWindow).Sub(now).Seconds()+0.999))
		return e
	}
	// No attempt number: the delivery function takes the next one free
	// when the message comes, so a scheduled retry racing it never sends
	// the same number twice.
	err = r.Queue.SendDelivery(ctx, events.Delivery{ID: rec.ID, WebhookID: rec.WebhookID, Kind: rec.Kind, WorkspaceID: rec.WorkspaceID,
		WebhookKey: rec.WebhookKey, EventID: rec.EventID, EventType: rec.EventType, AttemptBase: max(rec.Attempts, 1), Body: body})
	if err != nil {
		if rerr := r.Store.ReleaseRedelivery(context.WithoutCancel(ctx), workspaceID, webhookID, id); rerr != nil {
			slog.WarnContext(ctx, "delivery: release redelivery claim", "delivery_id", id, "error", rerr.Error())
		}
		return err
	}
	return nil
}
