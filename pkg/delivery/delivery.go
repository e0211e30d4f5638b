package delivery

import (
	"context"
	"time"

	"github.com/chatbridge/chat/pkg/events"
)

// Statuses of a delivery.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Why a webhook was disabled (its disabled_reason): a 410, or a failure
// streak of a day and ten attempts.
const (
	DisabledGone    = "gone"
	DisabledFailing = "failing"
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
	// SlowSince is when an attempt to it was still waiting SlowAfter
	// after it was sent (zero when none since the last success): its
	// deliveries go to the slow lane before that attempt's timeout counts.
	SlowSince time.Time
	// ReenabledAt is when an admin last re-enabled the webhook (zero when
	// never): events from before it are not delivered (contract section 11).
	ReenabledAt time.Time
	// RateLimit is the most deliveries a second (0: none); deliveries past
	// it wait on the queue, never counted as failed (ratelimit.go).
	RateLimit int
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
	// Queued is the number of the next attempt when its queue message was
	// sent, 0 when none was.
	Queued int
	// Lease is the reservation this attempt holds.
	Lease Lease
	// Failed reports the attempt failed, which extends the webhook's
	// failure streak.
	Failed bool
}

// Lease is a reservation of an attempt number: until Until, no other
// message may take the number; Token tells this reservation from a later
// one of the same number (taken over once this one expired).
type Lease struct {
	Until time.Time
	Token string
}

// Reservation asks for an attempt number of a delivery.
type Reservation struct {
	Delivery events.Delivery
	// Number is the number wanted: free when the delivery's last reserved
	// number is Number-1 (for 1: none), or when Number itself is reserved
	// under an expired lease (taken over). 0 wants the next number,
	// whatever it is, once no attempt holds a live lease (a redelivery).
	Number int
	At     time.Time
	Lease  Lease
}

// State is a delivery record as a refused reservation found it.
type State struct {
	// Attempts is the last number reserved.
	Attempts int
	// LeaseUntil is when the live or expired reservation of Attempts ends;
	// zero once its attempt's result is recorded.
	LeaseUntil time.Time
	Status     string
	NextAt     time.Time
	// Queued is the number whose queue message was sent (0: unknown).
	Queued int
}

// Store reads webhooks and records attempts.
type Store interface {
	// Webhook reads a webhook. Errors: ENotFound when it is gone.
	Webhook(ctx context.Context, kind, workspaceID, key string) (Webhook, error)
	// Reserve reserves an attempt number with one conditional write, which
	// also shows the attempt in the delivery log (pending). ok is false when
	// the number is not free; st is then the record as found.
	Reserve(ctx context.Context, r Reservation) (n int, ok bool, st State, err error)
	// RecordAttempt writes a's result on its delivery record and ends its
	// lease, unless another reservation took the number over meanwhile.
	// Errors: EConflict when one did; EUnavailable.
	RecordAttempt(ctx context.Context, a Attempt) error
	// ExtendFailing counts a failed attempt in the webhook's failure
	// streak (started at at when none is running), with a write that
	// concurrent attempts never conflict on.
	ExtendFailing(ctx context.Context, w Webhook, at time.Time) error
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
	// Lane is the queue it was read from.
	Lane Lane
}

// Lane names the queue a message was read from (docs/delivery.md, "The
// slow lane").
type Lane int

// The lanes. LaneOther is a queue the deliverer does not recognise (a
// redrive target, a test invocation): its messages are attempted where
// they are and never moved, so that no message can bounce between queues.
// LaneWait holds messages not yet due; nothing is attempted there.
const (
	LaneOther Lane = iota
	LaneFast
	LaneSlow
	LaneWait
)

func (l Lane) String() string {
	switch l {
	case LaneFast:
		return "fast"
	case LaneSlow:
		return "slow"
	case LaneWait:
		return "wait"
	}
	return "other"
}

// MaxQueueDelay is the longest SQS delays one message (DelaySeconds 900):
// a longer wait is a message sent again on its receive.
const MaxQueueDelay = 15 * time.Minute

// Queue holds a delivery's next message back on the queue.
type Queue interface {
	// Schedule sends d to be received after delay, which is at most
	// MaxQueueDelay.
	Schedule(ctx context.Context, d events.Delivery, delay time.Duration) error
}

// MessageStates tells the delivery function whether the message an event
// carries was deleted since (contract section 13: from a deletion's
// response on, no content of the message is sent again).
type MessageStates interface {
	// DeletedAt returns when message id of channel was deleted, with a
	// strongly consistent read; zero when it was not, or is not stored.
	// Errors: EUnavailable.
	DeletedAt(ctx context.Context, channelID, messageID string) (time.Time, error)
}

// SlowMarker marks webhooks whose attempts are slow.
type SlowMarker interface {
	// MarkSlow sets w's SlowSince to at unless it is set. ClearFailing
	// clears it. Errors: EUnavailable.
	MarkSlow(ctx context.Context, w Webhook, at time.Time) error
}
