package delivery

import (
	"context"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/events"
)

// RedeliverStore reads what a redelivery repeats.
type RedeliverStore interface {
	// Delivery reads a webhook's delivery record. Errors: ENotFound.
	Delivery(ctx context.Context, workspaceID, webhookID, deliveryID string) (Record, error)
	// Event reads an event's envelope as first sent. Errors: ENotFound.
	Event(ctx context.Context, eventID string) ([]byte, error)
}

// Sender queues one delivery.
type Sender interface {
	SendDelivery(ctx context.Context, d events.Delivery) error
}

// Redeliverer queues a new attempt of a recorded delivery.
type Redeliverer struct {
	Store RedeliverStore
	Queue Sender
}

// Redeliver queues a new attempt of delivery id of the kind's webhook in
// workspace, whatever its status: same delivery id, the same envelope,
// attempt numbers continuing from the record's, and a schedule of its own. Errors: ENotFound for an
// unknown (or other kind's, or expired) delivery; EUnavailable.
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
	body, err := r.Store.Event(ctx, rec.EventID)
	if err != nil {
		return err
	}
	// No attempt number: the delivery function takes the next one free
	// when the message comes, so a scheduled retry racing it never sends
	// the same number twice.
	return r.Queue.SendDelivery(ctx, events.Delivery{ID: rec.ID, WebhookID: rec.WebhookID, Kind: rec.Kind, WorkspaceID: rec.WorkspaceID,
		WebhookKey: rec.WebhookKey, EventID: rec.EventID, EventType: rec.EventType, AttemptBase: max(rec.Attempts, 1), Body: body})
}
