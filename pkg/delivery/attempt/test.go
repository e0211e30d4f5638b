package attempt

import (
	"context"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/events"
)

// Tester sends a webhook.test event to a webhook, once (contract section
// 14): the same signing, headers and network guard as every attempt, no
// retry, no effect on the webhook's failure streak.
type Tester struct {
	// Deliverer makes the attempt: its Client (the guarded one) and Now.
	Deliverer *Deliverer
	Log       delivery.TestLog
	IDs       interface{ New(time.Time) string }
}

// Test posts a webhook.test event to w now and returns the attempt, once
// its record is in the delivery log. A failed receiver is a result, not an
// error. Errors: EInternal (the envelope); EUnavailable when the record
// could not be written (the receiver may have had the event).
func (t *Tester) Test(ctx context.Context, w delivery.Webhook) (delivery.Attempt, error) {
	now := t.Deliverer.now()
	ev := events.Event{ID: t.IDs.New(now), Type: events.WebhookTest, WorkspaceID: w.WorkspaceID, CreatedAt: now,
		Data: events.WebhookRef{WebhookID: w.ID}}
	body, err := events.Encode(ev)
	if err != nil {
		return delivery.Attempt{}, chat.Internal(err)
	}
	del := events.Delivery{ID: events.DeliveryID(ev, w.ID), WebhookID: w.ID, Kind: w.Kind, WorkspaceID: w.WorkspaceID,
		WebhookKey: w.Key, EventID: ev.ID, EventType: ev.Type, Body: body}
	a := t.Deliverer.attempt(ctx, w, del, 1).Attempt
	a.Delivery.Body = nil
	if err := t.Log.PutTestDelivery(ctx, a); err != nil {
		return delivery.Attempt{}, err
	}
	return a, nil
}
