package realtime

import (
	"context"
	"errors"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
)

// Limits of the realtime API, enforced in code (API Gateway enforces the
// frame and message sizes too; chatctl serve's emulation enforces them the
// same way).
const (
	// SubscribeWithin is how long a connection may stay silent before it
	// subscribes.
	SubscribeWithin = 30 * time.Second
	// MaxPerRoom is the most subscribed connections of one room's guests.
	MaxPerRoom = 200
	// MaxPerMember is the most subscribed connections of one workspace
	// member on one channel (a member reading three channels may hold 15).
	MaxPerMember = 5
	// MaxBackfill is the most messages a subscribe with "since" sends
	// before "subscribed"; past it, "backfill_truncated" names a cursor.
	MaxBackfill = 200
	// TypingEvery is the shortest time between two typing signals of one
	// connection that readers are sent.
	TypingEvery = 3 * time.Second
	// MaxFrameBytes is API Gateway's WebSocket frame size.
	MaxFrameBytes = 32 * 1024
	// MaxMessageBytes is API Gateway's WebSocket message size, in either
	// direction: a push larger than this is replaced by a "message.too_large"
	// notice that names the message, which the client reads over HTTP.
	MaxMessageBytes = 128 * 1024
	// ConnectionTTL is API Gateway's longest WebSocket connection: a
	// connection item is worthless after it (expiry checked on read; the
	// table's TTL deletes it later).
	ConnectionTTL = 2 * time.Hour
	// IdleTimeout is API Gateway's idle timeout: a connection that sends
	// nothing for this long is closed (the guest page pings well within it).
	IdleTimeout = 10 * time.Minute
	// MaxConnectionIDBytes bounds a connection id before it is used in a key.
	MaxConnectionIDBytes = 128
	// ChangeRetention is how long a channel's change log keeps a message's
	// change (an edit, a deletion, a translation landing) for a reconnect's
	// backfill: a subscribe whose since is older than this cannot be told
	// every change, and is told to reload instead (backfill.go).
	ChangeRetention = 7 * 24 * time.Hour
)

// Reader kinds of a connection.
const (
	KindGuest  = chat.AuthorGuest
	KindMember = chat.AuthorUser
)

// Connection is one subscribed WebSocket connection: who reads, in which
// language, which channel.
type Connection struct {
	ID          string
	WorkspaceID string
	ChannelID   string
	// Kind is KindGuest or KindMember; SubjectID the guest's or user's id.
	Kind      string
	SubjectID string
	// RoomID is the guest's room; "" for a member.
	RoomID string
	// Language is the reader's preferred language.
	Language  string
	ExpiresAt time.Time
	// Name is the reader's display name (a guest's nickname, a member's
	// name): the author of its typing signals.
	Name string
	// Token identifies the credential the connection subscribed with
	// (chat.SeatToken of its hash): a connection whose credential was
	// replaced or revoked is no longer entitled (see Access).
	Token string
	// Backfilled are the ids of the messages its subscribe's backfill sent
	// that a live push could still be about to send: the push skips them.
	Backfilled []string
	// Pending is set while its subscribe's backfill is read and sent: a
	// push holds the message for the subscribe to send instead (Holder).
	Pending bool
	// PendingUntil ends Pending: a subscribe that died before its Ready
	// (its function timed out) would otherwise have every push held for
	// the connection's whole life. After it, pushes are sent as usual.
	PendingUntil time.Time
	// Access is what the store read, in the same Query, about the
	// connection's right to read its channel now; nil when the store read
	// none (a test's fake), which Entitled takes as entitled.
	Access *Access
}

// Live reports whether c is still usable at now.
func (c Connection) Live(now time.Time) bool { return now.Before(c.ExpiresAt) }

// ConnectionStore stores subscribed connections by channel.
type ConnectionStore interface {
	// Connections returns the channel's live connections at now, with one
	// Query (more only past 1 MB of them). Errors: EUnavailable, EInternal.
	Connections(ctx context.Context, channelID string, now time.Time) ([]Connection, error)
	// PutConnection stores c, replacing the item of the same channel and id.
	// Errors: EUnavailable, EInternal.
	PutConnection(ctx context.Context, c Connection) error
	// DeleteConnection removes the connection's item; a missing one is not
	// an error. Errors: EUnavailable, EInternal.
	DeleteConnection(ctx context.Context, channelID, connectionID string) error
}

// BackfillStore reads what a reconnecting client missed.
type BackfillStore interface {
	// Backfill returns the channel's newest messages after the message id
	// since (ULIDs sort by time, so since is a position in the channel's
	// order), oldest first, at most max, with one Query. next is "" when
	// they are all the messages after since; else it is the list position
	// (GET .../messages' cursor position) of the oldest one returned, from
	// which the client pages back towards since. Errors: EUnavailable,
	// EInternal.
	Backfill(ctx context.Context, channelID, since string, max int) (msgs []chat.Message, next string, err error)
	// Ready ends the connection's backfill with one write: it records the
	// ids the backfill sent that a push may still be about to send
	// (Connection.Backfilled), stops holding pushes for it, and returns the
	// ids of the messages whose pushes it held meanwhile (Holder). A
	// connection whose item is gone is not an error. Errors: EUnavailable,
	// EInternal.
	Ready(ctx context.Context, channelID, connectionID string, sent []string) (held []string, err error)
	// Messages reads the channel's messages of ids (missing ones are left
	// out). Errors: EUnavailable, EInternal.
	Messages(ctx context.Context, channelID string, ids []string) ([]chat.Message, error)
	// Changed reads the channel's change log (ChangeLog) from since on: the
	// messages changed at or after since, each once, in the order of its
	// latest change, at most max. complete is false when the log holds
	// more than max of them, or more entries than one read takes. Errors:
	// EUnavailable, EInternal.
	Changed(ctx context.Context, channelID string, since time.Time, max int) (changes []LoggedChange, complete bool, err error)
}

// LoggedChange is one message's latest entry in its channel's change log.
type LoggedChange struct {
	MessageID string
	At        time.Time
}

// ChangeLog records message changes for reconnecting readers: a subscribe
// with since learns from it which older messages were edited, deleted or
// translated while its reader was away.
type ChangeLog interface {
	// LogChange records that message messageID of channelID changed at at,
	// with one write, kept ChangeRetention. Errors: EUnavailable, EInternal.
	LogChange(ctx context.Context, channelID, messageID string, at time.Time) error
}

// Holder is implemented by a ConnectionStore that can hold a push for a
// connection whose backfill is being read (Connection.Pending).
type Holder interface {
	// Hold records messageID on the connection's item if it is still
	// pending, with one conditional write: true when held (its subscribe
	// sends it). When no longer pending, false and the ids its backfill
	// sent (Connection.Backfilled), as the item says now. Errors:
	// EUnavailable, EInternal.
	Hold(ctx context.Context, channelID, connectionID, messageID string) (held bool, backfilled []string, err error)
}

// TypingStore finds the connection a typing signal came from and limits
// its signals.
type TypingStore interface {
	// TypingConnection returns the subscribed connection connectionID with
	// one conditional write that records now as its last typing signal:
	// false when it is not subscribed (or expired) or signalled less than
	// every ago. Errors: EUnavailable, EInternal.
	TypingConnection(ctx context.Context, connectionID string, now time.Time, every time.Duration) (Connection, bool, error)
}

// ErrGone is what a Sender returns for a connection that no longer exists
// (API Gateway's 410 GoneException).
var ErrGone = errors.New("realtime: connection gone")

// Sender sends to connections (API Gateway's Management API).
type Sender interface {
	// Send sends data as one text message to the connection. Errors: ErrGone
	// for a connection that is gone; any other error otherwise.
	Send(ctx context.Context, connectionID string, data []byte) error
	// Close closes the connection; a gone one is not an error.
	Close(ctx context.Context, connectionID string) error
}

// ValidConnectionID reports whether id can be a connection id in a key: API
// Gateway's are short base64 strings.
func ValidConnectionID(id string) bool {
	if id == "" || len(id) > MaxConnectionIDBytes {
		return false
	}
	for _, c := range []byte(id) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '+' || c == '/' || c == '=' || c == '-' || c == '_':
		default:
			return false
		}
	}
	return true
}
