package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Delivery is one event for one webhook: what the delivery queue carries.
// Body is the encoded envelope (Encode), sent byte for byte.
type Delivery struct {
	ID          string `json:"id"`
	WebhookID   string `json:"webhook_id"`
	Kind        string `json:"kind"`
	WorkspaceID string `json:"workspace_id"`
	// WebhookKey is the webhook item's sort key, which the delivery
	// function reads the webhook by.
	WebhookKey string `json:"webhook_key"`
	EventID    string `json:"event_id"`
	EventType  string `json:"event_type"`
	// Attempt is the attempt number this message makes (X-Service-Attempt),
	// reserved on the delivery record before the POST so that a duplicate
	// of the message makes no second attempt. 0: the delivery's first
	// attempt, or for a redelivery (AttemptBase > 0) the next number free.
	Attempt int `json:"attempt,omitempty"`
	// AttemptBase is the number of attempts made before this message's run
	// (a redelivery's earlier attempts): the schedule's step is Attempt
	// less AttemptBase.
	AttemptBase int `json:"attempt_base,omitempty"`
	// Due is when the attempt is due; a message received earlier waits on
	// the queue again (SQS delays a message at most 15 minutes).
	Due time.Time `json:"due,omitzero"`
	// Body is the envelope, or nil when the queue message only refers to
	// the stored event (an envelope larger than InlineMax).
	Body []byte `json:"-"`
}

// InlineMax is the largest envelope a delivery carries in its queue
// message: ten such messages fit one SendMessageBatch (256 KiB), so an
// event's fan-out to N webhooks is at most ceil(N/10) calls. A larger
// envelope is stored once and its deliveries refer to it.
const InlineMax = 25 << 10

// Deliveries returns the deliveries of ev, whose envelope is body, to the
// webhooks that receive it; they carry body when it is at most InlineMax.
func Deliveries(ev Event, body []byte, hooks []Webhook, workspaceID string) []Delivery {
	var out []Delivery
	if len(body) > InlineMax {
		body = nil
	}
	for _, w := range Recipients(ev.Type, hooks) {
		out = append(out, Delivery{ID: DeliveryID(ev, w.ID), WebhookID: w.ID, Kind: w.Kind, WorkspaceID: workspaceID,
			WebhookKey: w.Key, EventID: ev.ID, EventType: ev.Type, Body: body})
	}
	return out
}

// queueMessage is a delivery on the queue: the envelope stays raw, so that
// the bytes signed and sent are the bytes Encode made.
type queueMessage struct {
	D Delivery        `json:"d"`
	E json.RawMessage `json:"e,omitempty"`
}

// MarshalQueue returns d as a queue message body. Its characters are those
// of the envelope and of ids, all of which SQS accepts.
func (d Delivery) MarshalQueue() (string, error) {
	b, err := json.Marshal(queueMessage{D: d, E: d.Body})
	if err != nil {
		return "", fmt.Errorf("events: delivery %s: %w", d.ID, err)
	}
	return string(b), nil
}

// UnmarshalQueue reads a queue message body written by MarshalQueue.
func UnmarshalQueue(body string) (Delivery, error) {
	var m queueMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return Delivery{}, fmt.Errorf("events: queue message: %w", err)
	}
	if m.D.ID == "" || m.D.WebhookID == "" || m.D.EventID == "" {
		return Delivery{}, fmt.Errorf("events: queue message without a delivery")
	}
	if len(m.E) > 0 {
		m.D.Body = bytes.Clone(m.E)
	}
	return m.D, nil
}
