package rooms

import (
	"context"
	"regexp"
	"strings"
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

// PriorGuest is the guest that already joined a room with the same client id.
type PriorGuest struct {
	GuestID   string
	TokenHash string
	CreatedAt time.Time
}

// Join is everything one join writes.
type Join struct {
	Room  chat.Room
	Guest chat.Guest
	// TokenHash is the hash of the new session token.
	TokenHash      string
	SessionExpires time.Time
	// Prior is set on a re-join; its token stops working.
	Prior *PriorGuest
}

// JoinStore is the storage a join needs: one read and one atomic write.
type JoinStore interface {
	// LoadJoin returns the room and, when clientKey is not empty, the guest
	// that joined it with that client id (nil if none). A room that does not
	// exist is an ERoomExpired error.
	LoadJoin(ctx context.Context, roomID, clientKey string) (chat.Room, *PriorGuest, error)
	// CommitJoin writes the guest, its session and its place among the
	// channel's readers atomically, and revokes Prior's session. Errors:
	// ERoomExpired when the room stopped being available meanwhile;
	// EConflict when a concurrent join with the same client id won.
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

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ValidClientID reports whether s is a UUID in canonical 8-4-4-4-12 form.
func ValidClientID(s string) bool { return uuidPattern.MatchString(s) }

// NormalizeNickname trims s and reports the problem with it, if any.
func NormalizeNickname(s string) (string, string) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", "The nickname field is required."
	case !utf8.ValidString(s):
		return "", "The nickname field contains invalid characters."
	case utf8.RuneCountInString(s) > MaxNicknameLen:
		return "", "The nickname field must not be greater than 64 characters."
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r) && r != '\u200d' {
			return "", "The nickname field contains invalid characters."
		}
	}
	return s, ""
}

// Join creates a guest in the room, or refreshes the one that joined with
// the same client id, and issues a new session token.
func (s *Service) Join(ctx context.Context, req JoinRequest) (JoinResult, error) {
	if !chat.ValidID(req.RoomID) {
		return JoinResult{}, ErrUnavailable()
	}
	clientKey := strings.ToLower(req.ClientID)
	var lastErr error
	// A lost race with a concurrent first join by the same client id is
	// retried as a re-join; three rounds are far more than that race needs.
	for attempt := 0; attempt < 3; attempt++ {
		res, err := s.join(ctx, req, clientKey)
		if !chat.IsCode(err, chat.EConflict) {
			return res, err
		}
		lastErr = err
	}
	return JoinResult{}, chat.Unavailable(lastErr)
}

func (s *Service) join(ctx context.Context, req JoinRequest, clientKey string) (JoinResult, error) {
	room, prior, err := s.Store.LoadJoin(ctx, req.RoomID, clientKey)
	if err != nil {
		return JoinResult{}, err
	}
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
	token := chat.NewToken(TokenPrefix)
	j := Join{Room: room, Guest: g, TokenHash: chat.HashToken(token), SessionExpires: exp, Prior: prior}
	if err := s.Store.CommitJoin(ctx, j); err != nil {
		return JoinResult{}, err
	}
	return JoinResult{Guest: g, Token: token, SessionExpires: exp, Room: room, Rejoined: prior != nil}, nil
}
