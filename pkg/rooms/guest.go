package rooms

import (
	"context"
	"strings"

	"github.com/chatbridge/chat/pkg/chat"
)

// SessionStore reads what a guest request is authorized against.
type SessionStore interface {
	// GuestSession returns the session stored under tokenHash, with its
	// guest, and the room roomID (nil when there is no such room), read
	// together. Errors: ENotFound when no session is stored under tokenHash,
	// or when it is a session of roomID that a re-join replaced (its
	// guest's seat names another session); EUnavailable when storage
	// failed.
	GuestSession(ctx context.Context, tokenHash, roomID string) (chat.GuestSession, *chat.Room, error)
}

// GuestAuth checks guest session tokens (contract section 6).
type GuestAuth struct {
	Sessions SessionStore
	Now      chat.Clock
}

// ErrGuestUnauthenticated is the one answer for a missing, malformed,
// unknown, replaced or expired guest token.
func ErrGuestUnauthenticated() error {
	return chat.Errorf(chat.EUnauthenticated, "Unauthenticated.")
}

// ErrGuestForbidden answers a live token of another room.
func ErrGuestForbidden() error {
	return chat.Errorf(chat.EForbidden, "This action is unauthorized.")
}

// Authenticate resolves token to its session for a request on roomID, with
// one store read. The decisions, in order:
//
//   - a missing or malformed token: EUnauthenticated, no lookup;
//   - a room id that is not a ULID: ERoomExpired (ErrUnavailable), no lookup;
//   - no session under the token (never issued, or replaced by a re-join,
//     which deletes the old token's session and gives the guest's seat to
//     the new one): EUnauthenticated;
//   - the token's own room is missing, closed or past its expiry:
//     ERoomExpired. This comes before the session's expiry, because a
//     session never outlives its room: the room being over is the reason;
//   - the session has expired (checked here: TTL deletion lags):
//     EUnauthenticated;
//   - a live token of another room: EForbidden, whatever that room is, so a
//     guest cannot probe other rooms;
//   - storage failures: EUnavailable or EInternal.
func (a *GuestAuth) Authenticate(ctx context.Context, roomID, token string) (chat.GuestSession, chat.Room, error) {
	token = strings.TrimSpace(token)
	if !chat.WellFormedToken(token) {
		return chat.GuestSession{}, chat.Room{}, ErrGuestUnauthenticated()
	}
	if !chat.ValidID(roomID) {
		return chat.GuestSession{}, chat.Room{}, ErrUnavailable()
	}
	hash := chat.HashToken(token)
	sess, room, err := a.Sessions.GuestSession(ctx, hash, roomID)
	if chat.IsCode(err, chat.ENotFound) {
		return chat.GuestSession{}, chat.Room{}, ErrGuestUnauthenticated()
	}
	if err != nil {
		return chat.GuestSession{}, chat.Room{}, err
	}
	// The lookup was by hash; comparing again in constant time guards
	// against a store that matched loosely.
	if !chat.HashesEqual(sess.TokenHash, hash) {
		return chat.GuestSession{}, chat.Room{}, ErrGuestUnauthenticated()
	}
	now := a.Now().UTC()
	ownRoom := sess.Guest.RoomID == roomID
	if ownRoom && (room == nil || !room.Available(now)) {
		return chat.GuestSession{}, chat.Room{}, ErrUnavailable()
	}
	if !now.Before(sess.ExpiresAt) {
		return chat.GuestSession{}, chat.Room{}, ErrGuestUnauthenticated()
	}
	if !ownRoom {
		return chat.GuestSession{}, chat.Room{}, ErrGuestForbidden()
	}
	return sess, *room, nil
}
