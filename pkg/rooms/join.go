package rooms

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/chat"
)

// SessionTTL caps a guest session; the room's own expiry caps it further.
const SessionTTL = 24 * time.Hour

// TokenPrefix marks guest session tokens, so that a leaked one is
// recognisable in a secret scanner.
const TokenPrefix = "gst_"

// MaxNicknameLen is the contract's bound, in characters after trimming.
const MaxNicknameLen = 64

// ErrUnavailable is the one answer for unknown, expired and closed rooms,
// so that room ids cannot be probed.
func ErrUnavailable() error {
	return chat.Errorf(chat.ERoomExpired, "The Temporary Room is not available.")
}

// MaxLiveSessions is the contract's bound on a room's live (unexpired,
// unrevoked) guest sessions.
const MaxLiveSessions = 100

// maxRelease bounds the expired seats one join frees, which keeps its
// condition expression small; one freed seat is all a join needs.
const maxRelease = 50

// ErrRoomFull answers a join that would take the room past MaxLiveSessions.
func ErrRoomFull() error {
	return chat.Errorf(chat.ERoomFull, "The Temporary Room is full.")
}

// PriorGuest is the guest that already joined a room with the same client id.
type PriorGuest struct {
	GuestID   string
	TokenHash string
	CreatedAt time.Time
}

// Seat is a guest's place among a room's live sessions: one per guest, held
// by the guest's current session until it expires. A re-join replaces the
// seat's session, which revokes the earlier token.
type Seat struct {
	GuestID string
	// Token identifies the session holding the seat (chat.SeatToken of its
	// token's hash).
	Token string
	// ExpiresAt is the session's expiry, rounded up to the second.
	ExpiresAt time.Time
}

// JoinState is what a join reads.
type JoinState struct {
	Room chat.Room
	// Prior is the guest that joined with the same client id, or nil.
	Prior *PriorGuest
	// Seats are the room's stored seats by guest id, live or expired; nil
	// when none was ever stored.
	Seats map[string]Seat
}

// Join is everything one join writes.
type Join struct {
	Room  chat.Room
	Guest chat.Guest
	// TokenHash is the hash of the new session token.
	TokenHash      string
	SessionExpires time.Time
	// Prior is set on a re-join; its session is deleted.
	Prior *PriorGuest
	// Seat is the guest's seat from now on.
	Seat Seat
	// Seats are the seats as loaded (nil: none stored yet), and Release
	// the expired ones among them that this join frees.
	Seats   map[string]Seat
	Release []Seat
}

// JoinStore is the storage a join needs: one read and one atomic write.
type JoinStore interface {
	// LoadJoin returns the room, the guest that joined it with the client
	// id clientKey when it is not empty, and the room's seats. A room that
	// does not exist is an ERoomExpired error.
	LoadJoin(ctx context.Context, roomID, clientKey string) (JoinState, error)
	// CommitJoin writes the guest, its session, its seat and its place
	// among the channel's readers atomically, deletes Prior's session and
	// removes the Release seats, on these conditions: the room is
	// available; a first join's client id is still unused; each Release
	// seat is still as loaded; and the guest's seat, if j.Seats held one,
	// still exists, else there is still room for one more seat
	// (MaxLiveSessions, counting Release as gone). Errors: ERoomExpired when
	// the room stopped being available meanwhile; EConflict when another
	// condition failed or a concurrent transaction collided: the caller
	// loads again and retries.
	CommitJoin(ctx context.Context, j Join) error
}

// JoinRequest is a validated join.
type JoinRequest struct {
	RoomID            string
	Nickname          string
	PreferredLanguage string
	// ClientID is a canonical UUID in any case, or "".
	ClientID string
}

// JoinResult is what a successful join returns.
type JoinResult struct {
	Guest          chat.Guest
	Token          string
	SessionExpires time.Time
	Room           chat.Room
	// Rejoined is true when a guest with the same client id existed.
	Rejoined bool
}

// Service joins guests to rooms.
type Service struct {
	Store JoinStore
	IDs   *chat.IDs
	Now   chat.Clock
}

// uuidPattern is a UUID in canonical 8-4-4-4-12 form.
// Compiled on first use: of the functions that link this package, only
// the join validates a client id (see chat's tagChars).
var uuidPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
})

// ValidClientID reports whether s is a UUID in canonical 8-4-4-4-12 form.
func ValidClientID(s string) bool { return uuidPattern().MatchString(s) }

// NormalizeNickname trims s and reports the problem with it, if any.
func NormalizeNickname(s string) (string, string) {
	return normalizeName("nickname", MaxNicknameLen, s)
}

// normalizeName is the one rule for a display name a person types (a
// guest's nickname, a room's name): trimmed, 1 to max characters, valid
// UTF-8, and no control characters, line or paragraph separators, or
// format characters other than ZWJ (which emoji sequences need). The second
// result is the 422 message for field, or "".
func normalizeName(field string, max int, s string) (string, string) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", "The " + field + " field is required."
	case !utf8.ValidString(s):
		return "", "The " + field + " field contains invalid characters."
	case utf8.RuneCountInString(s) > max:
		return "", fmt.Sprintf("The %s field must not be greater than %d characters.", field, max)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r) && r != '\u200d' {
			return "", "The " + field + " field contains invalid characters."
		}
	}
	return s, ""
}

// joinBudget bounds how long a join keeps retrying the rounds it loses: a
// concurrent first join with the same client id (the next round is a
// re-join), a seat freed or taken meanwhile, or DynamoDB cancelling one of
// two transactions that touch the room's seats item at once
// (TransactionConflict). Every join of a room writes that one item, so N
// guests joining in the same instant are served one after another, each
// transaction holding the item for DynamoDB's few milliseconds: a budget in
// time, not a count of rounds, lets a burst of joins all succeed, and stays
// well inside the function's Timeout.
const joinBudget = 6 * time.Second

// joinBackoffCap bounds one wait between rounds.
const joinBackoffCap = 250 * time.Millisecond

// Join creates a guest in the room, or refreshes the one that joined with
// the same client id, and issues a new session token. Errors: ERoomExpired
// (ErrUnavailable); ERoomFull when the room holds MaxLiveSessions live
// sessions and the guest holds none of them; EUnavailable when storage
// failed or the join kept losing races for joinBudget.
func (s *Service) Join(ctx context.Context, req JoinRequest) (JoinResult, error) {
	if !chat.ValidID(req.RoomID) {
		return JoinResult{}, ErrUnavailable()
	}
	clientKey := strings.ToLower(req.ClientID)
	deadline := time.Now().Add(joinBudget)
	var lastErr error
	for attempt := 0; attempt == 0 || time.Now().Before(deadline); attempt++ {
		if attempt > 1 {
			// The second round follows at once (it is usually a re-join that
			// cannot lose again); later ones back off with full jitter,
			// doubling up to joinBackoffCap, as DynamoDB cancels both of two
			// colliding transactions.
			d := time.Duration(rand.Int64N(int64(min(joinBackoffCap, 5*time.Millisecond<<min(attempt, 6)))))
			select {
			case <-ctx.Done():
				return JoinResult{}, chat.Unavailable(ctx.Err())
			case <-time.After(d):
			}
		}
		res, err := s.join(ctx, req, clientKey)
		if !chat.IsCode(err, chat.EConflict) {
			return res, err
		}
		lastErr = err
	}
	return JoinResult{}, chat.Unavailable(lastErr)
}

func (s *Service) join(ctx context.Context, req JoinRequest, clientKey string) (JoinResult, error) {
	st, err := s.Store.LoadJoin(ctx, req.RoomID, clientKey)
	if err != nil {
		return JoinResult{}, err
	}
	room, prior := st.Room, st.Prior
	now := s.Now().UTC()
	if !room.Available(now) {
		return JoinResult{}, ErrUnavailable()
	}
	exp := now.Add(SessionTTL)
	if room.ExpiresAt.Before(exp) {
		exp = room.ExpiresAt
	}
	g := chat.Guest{
		RoomID:            room.ID,
		WorkspaceID:       room.WorkspaceID,
		ChannelID:         room.ChannelID,
		Nickname:          req.Nickname,
		PreferredLanguage: req.PreferredLanguage,
		ClientID:          clientKey,
		CreatedAt:         now,
		UpdatedAt:         now,
	}
	if prior != nil {
		g.ID, g.CreatedAt = prior.GuestID, prior.CreatedAt
	} else {
		g.ID = s.IDs.New(now)
	}
	_, holds := st.Seats[g.ID]
	release, live := freeSeats(st.Seats, g.ID, now)
	if !holds && live >= MaxLiveSessions {
		return JoinResult{}, ErrRoomFull()
	}
	token := chat.NewToken(TokenPrefix)
	hash := chat.HashToken(token)
	j := Join{
		Room: room, Guest: g, TokenHash: hash, SessionExpires: exp, Prior: prior,
		Seat:  Seat{GuestID: g.ID, Token: chat.SeatToken(hash), ExpiresAt: ceilSecond(exp)},
		Seats: st.Seats, Release: release,
	}
	if err := s.Store.CommitJoin(ctx, j); err != nil {
		return JoinResult{}, err
	}
	return JoinResult{Guest: g, Token: token, SessionExpires: exp, Room: room, Rejoined: prior != nil}, nil
}

// freeSeats returns the expired seats of other guests that a join frees
// (the earliest expired first, at most maxRelease) and how many seats of
// other guests are live.
func freeSeats(seats map[string]Seat, guestID string, now time.Time) (release []Seat, live int) {
	for id, seat := range seats {
		switch {
		case id == guestID:
		case now.Before(seat.ExpiresAt):
			live++
		default:
			release = append(release, seat)
		}
	}
	slices.SortFunc(release, func(a, b Seat) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
	if len(release) > maxRelease {
		release = release[:maxRelease]
	}
	return release, live
}

// ceilSecond rounds t up to the second: a seat never frees before its
// session expires.
func ceilSecond(t time.Time) time.Time {
	if r := t.Truncate(time.Second); !r.Equal(t) {
		return r.Add(time.Second)
	}
	return t
}
