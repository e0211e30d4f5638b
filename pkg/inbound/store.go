package inbound

import (
	"context"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
)

// QuotaCounter counts inbound requests per workspace in fixed windows.
type QuotaCounter interface {
	// Hit counts one request of workspace in the window that starts at
	// window and returns the window's count including it. expires is when
	// the counter may be forgotten. Errors: EUnavailable.
	Hit(ctx context.Context, workspaceID string, window, expires time.Time) (int64, error)
}

// Idempotency record states.
const (
	StateInProgress = "in_progress"
	StateCompleted  = "completed"
)

// Record is a stored idempotency record.
type Record struct {
	State       string
	Fingerprint string
	Owner       string
	LockedUntil time.Time
	ExpiresAt   time.Time
	Status      int
	Body        []byte
	MessageID   string
}

// SignatureUse records that a signature was accepted for a webhook, so that
// it cannot be replayed while it is fresh.
type SignatureUse struct {
	WebhookID string
	// Hash is the SHA-256 of the matched v1 value.
	Hash string
	// KeyHash is the hash of the request's Idempotency-Key, or "": a
	// retry with the same key may use the signature again.
	KeyHash   string
	ExpiresAt time.Time
}

// Claim takes an Idempotency-Key for one request while it is processed.
type Claim struct {
	WebhookID   string
	Key         string
	KeyHash     string
	Fingerprint string
	// Owner identifies the request holding the claim.
	Owner       string
	LockedUntil time.Time
	ExpiresAt   time.Time
	// Signature, when set, is recorded in the same transaction.
	Signature *SignatureUse
}

// ClaimOutcome is the result of a claim.
type ClaimOutcome int

// Claim outcomes.
const (
	// Claimed: the key is now held by this request.
	Claimed ClaimOutcome = iota
	// KeyHeld: a live record holds the key; it is returned.
	KeyHeld
	// SignatureUsed: the signature was already accepted.
	SignatureUsed
)

// Acceptance is everything an accepted request writes, atomically.
type Acceptance struct {
	Message chat.Message
	Log     chat.RequestLog
	// Claim, when set, is completed with Status and Body; the write fails
	// with ClaimLost if the claim is no longer this request's.
	Claim  *Claim
	Status int
	Body   []byte
	// Signature, when set (requests without a key), is recorded; the
	// write fails with SignatureUsed if it was.
	Signature *SignatureUse
}

// AcceptOutcome is the result of an acceptance.
type AcceptOutcome int

// Accept outcomes.
const (
	Accepted AcceptOutcome = iota
	// AcceptSignatureUsed: the signature was already accepted.
	AcceptSignatureUsed
	// ClaimLost: another request took over the key (this one's lock had
	// expired); nothing was written.
	ClaimLost
)

// Store is the storage of the inbound path.
type Store interface {
	// Claim takes c.Key (and records c.Signature) in one transaction, unless
	// a record that is completed and not expired, or in progress and
	// locked, holds it (KeyHeld, with that record), or the signature was
	// used (SignatureUsed). Errors: EUnavailable.
	Claim(ctx context.Context, c Claim, now time.Time) (ClaimOutcome, Record, error)
	// Release gives up a claim this request still holds, after a failure,
	// so that a retry need not wait for the lock to expire.
	Release(ctx context.Context, c Claim) error
	// Accept writes the message, its log record and the idempotency result
	// in one transaction. Errors: EUnavailable.
	Accept(ctx context.Context, a Acceptance, now time.Time) (AcceptOutcome, error)
	// Log writes one request log record. Errors: EUnavailable.
	Log(ctx context.Context, rec chat.RequestLog) error
}
