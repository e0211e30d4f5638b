package inbound

import (
	"context"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
)

// QuotaCounter counts inbound requests per workspace in fixed windows.
type QuotaCounter interface {
	// Take counts one request of workspace in the window that starts at
	// window when fewer than limit were counted in it, and reports whether
	// it did and how many the window has left after it (never below 0; it
	// may be an estimate, exact at 0). A request refused is not counted:
	// the count never passes limit. expires is when the counter may be
	// forgotten. Errors: EUnavailable.
	Take(ctx context.Context, workspaceID string, window time.Time, limit int, expires time.Time) (ok bool, remaining int, err error)
}

// Idempotency record states. A post's key is claimed completed, in the
// transaction that stores the message. A webhook's change claims its key in
// progress, in the transaction that logs it, then applies the change and
// completes the record (or deletes it when the change is refused): a record
// in progress holds its key until LockedUntil, after which a retry claims
// it again (a change applied twice changes nothing more: an edit to the
// same content is a no-op, a deletion of a tombstone succeeds).
const (
	StateInProgress = "in_progress"
	StateCompleted  = "completed"
)

// Record is a stored idempotency record.
type Record struct {
	State       string
	Fingerprint string
	LockedUntil time.Time
	ExpiresAt   time.Time
	Status      int
	// Body is a post's answer; a change's answer is rebuilt from Message
	// (an edit's view, which may hold the content twice, would not always
	// fit an item).
	Body      []byte
	MessageID string
	// Message is the message an edit left, as its author reads it.
	Message *chat.Message
}

// KeyUse is the idempotency record a request with a key writes: a post's,
// completed with the acceptance's Status and Body; a change's, in progress
// (Owner, LockedUntil) until it is completed or released.
type KeyUse struct {
	WebhookID string
	Key       string
	// KeyHash is the SHA-256 of Key; the record is stored under it.
	KeyHash     string
	Fingerprint string
	ExpiresAt   time.Time
	// Owner is the request (its log record's id) that holds a claim in
	// progress, until LockedUntil.
	Owner       string
	LockedUntil time.Time
}

// SignatureUse records that a signature was accepted for a webhook, so that
// it cannot be used again while it is fresh.
type SignatureUse struct {
	WebhookID string
	// Hash is the SHA-256 of the matched v1 value.
	Hash string
	// KeyHash is the hash of the request's valid Idempotency-Key, or "": a
	// retry with the same key may use the signature again.
	KeyHash   string
	ExpiresAt time.Time
	// CheckOnly: the request did not reach step 6 (its body was refused),
	// so the signature is only checked unused, not recorded.
	CheckOnly bool
}

// Acceptance is everything an accepted request writes, atomically.
type Acceptance struct {
	Message chat.Message
	Log     chat.RequestLog
	// Key, when set, is recorded as completed with Status and Body, unless
	// a live record holds it.
	Key    *KeyUse
	Status int
	Body   []byte
	// Signature, when set, is recorded, unless it was used.
	Signature *SignatureUse
}

// Outcome is the result of a conditional write.
type Outcome int

// Outcomes of Store's writes.
const (
	// Written: everything was written.
	Written Outcome = iota
	// SignatureUsed: the signature was already accepted, and not by a
	// request with the same Idempotency-Key; nothing was written.
	SignatureUsed
	// KeyHeld: a live idempotency record holds the key (returned with the
	// outcome); nothing was written.
	KeyHeld
)

// Store is the storage of the inbound path.
type Store interface {
	// Accept writes the signature use, the idempotency record, the message
	// and its log record in one transaction. A live record is completed and
	// not expired, or in progress and locked. SignatureUsed takes precedence
	// over KeyHeld when both hold. Errors: EIdempotencyKeyInUse (a.Key set)
	// when the transaction kept colliding with another one on the same
	// items; EUnavailable.
	Accept(ctx context.Context, a Acceptance, now time.Time) (Outcome, Record, error)
	// Log writes one request log record. With sig, it does so in one
	// transaction that also records sig (or, with sig.CheckOnly, checks that
	// it is unused), and writes nothing when the signature was used
	// (SignatureUsed). Without sig it never overwrites a record: the record
	// of a request whose acceptance did commit, though its caller saw an
	// error, stays as written. Errors: EUnavailable.
	Log(ctx context.Context, rec chat.RequestLog, sig *SignatureUse, now time.Time) (Outcome, error)
	// ThreadRoot finds a reply's root (messages.ThreadReader).
	messages.ThreadReader
}
