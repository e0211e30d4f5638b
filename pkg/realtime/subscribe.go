package realtime

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// SubscribeRequest is the client's {"action": "subscribe", ...} message: a
// guest token alone (its room), or an API token with a workspace and
// channel (a member of that channel).
type SubscribeRequest struct {
	Token       string
	WorkspaceID string
	ChannelID   string
	// Since, when set, is the id of the last message the client holds: the
	// subscribe backfills what came after it (a well-formed id; the route
	// refuses others).
	Since string
}

// Subscribed is the answer to a subscribe that succeeded.
type Subscribed struct {
	Connection Connection
	// Backfill holds the frames to send before "subscribed", in order: the
	// messages after Since, oldest first, then "backfill_truncated" when
	// there were more than MaxBackfill. Empty without Since.
	Backfill [][]byte
	// sent and recent are the ids of the backfill's messages, and of those
	// recent enough that a push may still be on its way (Ready).
	sent   map[string]bool
	recent []string
	// changes are the frames of the changes the backfill sent, by id.
	changes map[string][]byte
}

// GuestSessions finds a guest token's session (rooms.SessionStore).
type GuestSessions interface {
	GuestSession(ctx context.Context, tokenHash, roomID string) (chat.GuestSession, *chat.Room, error)
}

// GuestAuthenticator checks a guest token on a room (rooms.GuestAuth).
type GuestAuthenticator interface {
	Authenticate(ctx context.Context, roomID, token string) (chat.GuestSession, chat.Room, error)
}

// MemberAuthorizer checks an API token on a workspace
// (workspaces.Authenticator).
type MemberAuthorizer interface {
	Authorize(ctx context.Context, authorization, workspaceID string) (workspaces.Principal, error)
}

// Subscriber decides subscriptions and records them.
type Subscriber struct {
	Sessions GuestSessions
	Guests   GuestAuthenticator
	Members  MemberAuthorizer
	Store    ConnectionStore
	// Probe, when set, tells whether a connection still exists (the
	// Management API's GetConnection). The template has no $disconnect
	// route, so a closed connection keeps its item until a push meets its
	// 410 or its TTL: before refusing a member at MaxPerMember, the
	// member's counted connections are probed and the gone ones dropped.
	Probe func(ctx context.Context, connectionID string) (bool, error)
	Now   chat.Clock

	// Backfills, Translations and Encode read and render a backfill
	// (backfill.go); Cursor turns its list position into the cursor of
	// the reader's GET .../messages (nil: no cursor is given).
	Backfills    BackfillStore
	Translations TranslationReader
	Encode       func(chat.MessageView) ([]byte, error)
	Cursor       func(c Connection, position string) string
	// Reactions reads the backfilled messages' reactions as the
	// connection's reader sees them; nil shows none.
	Reactions rooms.ReactionReader
}

// ErrTooManyConnections answers a subscribe past MaxPerRoom or
// MaxPerMember.
func ErrTooManyConnections(limit int, of string) error {
	return chat.Errorf(chat.EQuotaExceeded, "Too many connections: at most %d per %s.", limit, of)
}

// Subscribe subscribes connection connectionID as the reader req's token
// names. Errors, answered to the client by their code then the connection
// is closed: EUnauthenticated (missing, malformed, unknown, replaced or
// expired token, or a malformed connection id); EForbidden (a member's
// token of another workspace, or not a member of the channel);
// ERoomExpired (the guest's room is closed or over); EQuotaExceeded
// (ErrTooManyConnections); EUnavailable, EInternal.
//
// A guest's subscribe reads its session twice (once to learn its room,
// once to check it with the room, as the guest endpoints do); a member's
// reads its token once. Both then Query the channel's connections once (the
// limits) and write its items (one BatchWriteItem). The connection is
// registered before a backfill is read (backfill.go), so that nothing
// stored meanwhile is missed.
func (s *Subscriber) Subscribe(ctx context.Context, connectionID string, req SubscribeRequest) (Subscribed, error) {
	if !ValidConnectionID(connectionID) {
		return Subscribed{}, chat.Errorf(chat.EUnauthenticated, "Unauthenticated.")
	}
	token := strings.TrimSpace(req.Token)
	if !chat.WellFormedToken(token) {
		return Subscribed{}, chat.Errorf(chat.EUnauthenticated, "Unauthenticated.")
	}
	now := s.Now().UTC()
	var c Connection
	if req.WorkspaceID == "" && req.ChannelID == "" {
		sess, _, err := s.Sessions.GuestSession(ctx, chat.HashToken(token), "")
		if chat.IsCode(err, chat.ENotFound) {
			return Subscribed{}, chat.Errorf(chat.EUnauthenticated, "Unauthenticated.")
		}
		if err != nil {
			return Subscribed{}, err
		}
		sess, room, err := s.Guests.Authenticate(ctx, sess.Guest.RoomID, token)
		if err != nil {
			return Subscribed{}, err
		}
		g := sess.Guest
		c = Connection{ID: connectionID, WorkspaceID: room.WorkspaceID, ChannelID: room.ChannelID,
			Kind: KindGuest, SubjectID: g.ID, RoomID: room.ID, Language: g.PreferredLanguage,
			ExpiresAt: earliest(now.Add(ConnectionTTL), sess.ExpiresAt, room.ExpiresAt),
			Name:      g.Nickname, Token: chat.SeatToken(chat.HashToken(token))}
	} else {
		p, err := s.Members.Authorize(ctx, "Bearer "+token, req.WorkspaceID)
		if err != nil {
			return Subscribed{}, err
		}
		if !chat.ValidID(req.ChannelID) || !p.MemberOf(req.ChannelID) {
			return Subscribed{}, workspaces.ErrForbidden()
		}
		c = Connection{ID: connectionID, WorkspaceID: p.WorkspaceID, ChannelID: req.ChannelID,
			Kind: KindMember, SubjectID: p.UserID, Language: p.PreferredLanguage,
			ExpiresAt: now.Add(ConnectionTTL), Name: p.Name, Token: chat.SeatToken(chat.HashToken(token))}
	}
	existing, err := s.Store.Connections(ctx, c.ChannelID, now)
	if err != nil {
		return Subscribed{}, err
	}
	// counted are the connections that count against c's limit: the
	// room's guests' or the member's on this channel. A connection whose
	// access has ended (a replaced token, a closed room) counts for no one.
	var counted []Connection
	for _, e := range existing {
		if e.ID == c.ID {
			continue // a re-subscribe replaces its own item
		}
		if ok, _ := e.Entitled(now); !ok {
			continue
		}
		if c.Kind == KindGuest && e.Kind == KindGuest && e.RoomID == c.RoomID ||
			c.Kind == KindMember && e.Kind == KindMember && e.SubjectID == c.SubjectID {
			counted = append(counted, e)
		}
	}
	limit, of := MaxPerRoom, "room"
	if c.Kind == KindMember {
		limit, of = MaxPerMember, "member on a channel"
	}
	if len(counted) >= limit && s.Probe != nil {
		counted = s.dropGone(ctx, counted)
	}
	if len(counted) >= limit {
		return Subscribed{}, ErrTooManyConnections(limit, of)
	}
	if req.Since == "" {
		if err := s.Store.PutConnection(ctx, c); err != nil {
			return Subscribed{}, err
		}
		return Subscribed{Connection: c}, nil
	}
	return s.backfill(ctx, c, req.Since)
}

// probeConcurrency bounds the GetConnection calls in flight at the limit.
const probeConcurrency = 16

// dropGone returns the connections of conns that still exist, deleting the
// items of the others. A probe that fails counts the connection as live.
// The Management API has no batch read: up to MaxPerRoom probes run,
// probeConcurrency at a time, only when a subscribe meets its limit.
func (s *Subscriber) dropGone(ctx context.Context, conns []Connection) []Connection {
	alive := make([]bool, len(conns))
	sem := make(chan struct{}, probeConcurrency)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ok, err := s.Probe(ctx, c.ID)
			alive[i] = err != nil || ok
			if !alive[i] {
				// Deleted beside the probes, not one after another at
				// the end: 200 gone connections cost the time of 13.
				_ = s.Store.DeleteConnection(ctx, c.ChannelID, c.ID)
			}
		}()
	}
	wg.Wait()
	live := conns[:0:0]
	for i, c := range conns {
		if alive[i] {
			live = append(live, c)
		}
	}
	return live
}

func earliest(t time.Time, others ...time.Time) time.Time {
	for _, o := range others {
		if !o.IsZero() && o.Before(t) {
			t = o
		}
	}
	return t
}
