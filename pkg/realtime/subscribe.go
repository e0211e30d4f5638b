package realtime

import (
	"context"
	"strings"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// SubscribeRequest is the client's {"action": "subscribe", ...} message: a
// guest token alone (its room), or an API token with a workspace and
// channel (a member of that channel).
type SubscribeRequest struct {
	Token       string
	WorkspaceID string
	ChannelID   string
}

// Subscribed is the answer to a subscribe that succeeded.
type Subscribed struct {
	Connection Connection
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
// limits) and write one item.
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
			ExpiresAt: earliest(now.Add(ConnectionTTL), sess.ExpiresAt, room.ExpiresAt)}
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
			ExpiresAt: now.Add(ConnectionTTL)}
	}
	existing, err := s.Store.Connections(ctx, c.ChannelID, now)
	if err != nil {
		return Subscribed{}, err
	}
	room := 0
	var member []Connection
	for _, e := range existing {
		if e.ID == c.ID {
			continue // a re-subscribe replaces its own item
		}
		if c.Kind == KindGuest && e.Kind == KindGuest && e.RoomID == c.RoomID {
			room++
		}
		if c.Kind == KindMember && e.Kind == KindMember && e.SubjectID == c.SubjectID {
			member = append(member, e)
		}
	}
	if len(member) >= MaxPerMember && s.Probe != nil {
		member = s.dropGone(ctx, member)
	}
	switch {
	case c.Kind == KindGuest && room >= MaxPerRoom:
		return Subscribed{}, ErrTooManyConnections(MaxPerRoom, "room")
	case c.Kind == KindMember && len(member) >= MaxPerMember:
		return Subscribed{}, ErrTooManyConnections(MaxPerMember, "member")
	}
	if err := s.Store.PutConnection(ctx, c); err != nil {
		return Subscribed{}, err
	}
	return Subscribed{Connection: c}, nil
}

// dropGone returns the connections of conns that still exist, deleting the
// items of the others. A probe that fails counts the connection as live.
func (s *Subscriber) dropGone(ctx context.Context, conns []Connection) []Connection {
	live := conns[:0:0]
	for _, c := range conns {
		ok, err := s.Probe(ctx, c.ID)
		if err != nil || ok {
			live = append(live, c)
			continue
		}
		_ = s.Store.DeleteConnection(ctx, c.ChannelID, c.ID)
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
