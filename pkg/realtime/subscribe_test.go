package realtime_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/realtime"
	"github.com/chatbridge/chat/pkg/workspaces"
)

type sessionsFunc func(ctx context.Context, hash, roomID string) (chat.GuestSession, *chat.Room, error)

func (f sessionsFunc) GuestSession(ctx context.Context, hash, roomID string) (chat.GuestSession, *chat.Room, error) {
	return f(ctx, hash, roomID)
}

type guestsFunc func(ctx context.Context, roomID, token string) (chat.GuestSession, chat.Room, error)

func (f guestsFunc) Authenticate(ctx context.Context, roomID, token string) (chat.GuestSession, chat.Room, error) {
	return f(ctx, roomID, token)
}

type membersFunc func(ctx context.Context, auth, ws string) (workspaces.Principal, error)

func (f membersFunc) Authorize(ctx context.Context, auth, ws string) (workspaces.Principal, error) {
	return f(ctx, auth, ws)
}

func TestSubscribe(t *testing.T) {
	const (
		roomID = "01JROOM0000000000000000000"
		wsID   = "01JWS000000000000000000000"
		token  = "gst_0123456789abcdefghijklmnopqrstuv"
	)
	room := chat.Room{ID: roomID, WorkspaceID: wsID, ChannelID: chanID, Status: chat.RoomActive, ExpiresAt: t0.Add(time.Hour)}
	sess := chat.GuestSession{Guest: chat.Guest{ID: "g", RoomID: roomID, PreferredLanguage: "es"}, ExpiresAt: t0.Add(30 * time.Minute)}
	guestConns := func(n int) []realtime.Connection {
		var out []realtime.Connection
		for i := range n {
			out = append(out, realtime.Connection{ID: fmt.Sprint("g", i), ChannelID: chanID, Kind: realtime.KindGuest, RoomID: roomID, ExpiresAt: t0.Add(time.Hour)})
		}
		return out
	}
	memberConns := func(n int) []realtime.Connection {
		var out []realtime.Connection
		for i := range n {
			out = append(out, realtime.Connection{ID: fmt.Sprint("m", i), ChannelID: chanID, Kind: realtime.KindMember, SubjectID: "u", ExpiresAt: t0.Add(time.Hour)})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		conn     string
		req      realtime.SubscribeRequest
		existing []realtime.Connection
		authErr  error
		want     string // error code, "" for success
	}{
		{"guest", "abc=", realtime.SubscribeRequest{Token: token}, nil, nil, ""},
		{"guest at the room's limit less one", "abc=", realtime.SubscribeRequest{Token: token}, guestConns(realtime.MaxPerRoom - 1), nil, ""},
		{"guest past the room's limit", "abc=", realtime.SubscribeRequest{Token: token}, guestConns(realtime.MaxPerRoom), nil, chat.EQuotaExceeded},
		{"guest of a closed room", "abc=", realtime.SubscribeRequest{Token: token}, nil, chat.Errorf(chat.ERoomExpired, "gone"), chat.ERoomExpired},
		{"no token", "abc=", realtime.SubscribeRequest{}, nil, nil, chat.EUnauthenticated},
		{"token with a control character", "abc=", realtime.SubscribeRequest{Token: "gst_\u2028x"}, nil, nil, chat.EUnauthenticated},
		{"connection id not an API Gateway id", "a#b", realtime.SubscribeRequest{Token: token}, nil, nil, chat.EUnauthenticated},
		{"member", "abc=", realtime.SubscribeRequest{Token: token, WorkspaceID: wsID, ChannelID: chanID}, memberConns(realtime.MaxPerMember - 1), nil, ""},
		{"member past the limit", "abc=", realtime.SubscribeRequest{Token: token, WorkspaceID: wsID, ChannelID: chanID}, memberConns(realtime.MaxPerMember), nil, chat.EQuotaExceeded},
		{"member re-subscribing the same connection", "m0", realtime.SubscribeRequest{Token: token, WorkspaceID: wsID, ChannelID: chanID}, memberConns(realtime.MaxPerMember), nil, ""},
		{"member past the limit, one of them gone", "abc=", realtime.SubscribeRequest{Token: token, WorkspaceID: wsID, ChannelID: chanID}, memberConns(realtime.MaxPerMember), nil, ""},
		{"member of another channel", "abc=", realtime.SubscribeRequest{Token: token, WorkspaceID: wsID, ChannelID: "01JCHAN0000000000000000009"}, nil, nil, chat.EForbidden},
		{"member of another workspace", "abc=", realtime.SubscribeRequest{Token: token, WorkspaceID: wsID, ChannelID: chanID}, nil, workspaces.ErrForbidden(), chat.EForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &fakeStore{conns: tc.existing}
			s := &realtime.Subscriber{
				Sessions: sessionsFunc(func(context.Context, string, string) (chat.GuestSession, *chat.Room, error) { return sess, nil, nil }),
				Guests: guestsFunc(func(_ context.Context, r, _ string) (chat.GuestSession, chat.Room, error) {
					if r != roomID {
						t.Fatalf("authenticated on room %q, want the session's %q", r, roomID)
					}
					return sess, room, tc.authErr
				}),
				Members: membersFunc(func(context.Context, string, string) (workspaces.Principal, error) {
					return workspaces.Principal{WorkspaceID: wsID, UserID: "u", PreferredLanguage: "fr", Channels: []string{chanID}}, tc.authErr
				}),
				Store: store, Now: func() time.Time { return t0 },
			}
			if strings.Contains(tc.name, "gone") {
				s.Probe = func(_ context.Context, id string) (bool, error) { return id != "m3", nil }
			}
			got, err := s.Subscribe(context.Background(), tc.conn, tc.req)
			if code := chat.ErrorCode(err); (err == nil) != (tc.want == "") || (err != nil && code != tc.want) {
				t.Fatalf("got %v (%s), want %q", err, code, tc.want)
			}
			if strings.Contains(tc.name, "gone") && fmt.Sprint(store.deleted) != "[m3]" {
				t.Fatalf("deleted %v, want the gone connection m3", store.deleted)
			}
			if tc.want != "" {
				if len(store.put) != 0 {
					t.Fatalf("refused subscribe stored %v", store.put)
				}
				return
			}
			if len(store.put) != 1 || !reflect.DeepEqual(store.put[0], got.Connection) || got.Connection.ChannelID != chanID {
				t.Fatalf("stored %v, answered %v", store.put, got)
			}
			if c := got.Connection; c.Kind == realtime.KindGuest && (c.Language != "es" || c.RoomID != roomID || !c.ExpiresAt.Equal(sess.ExpiresAt)) {
				t.Fatalf("guest connection %+v: want es, its room, expiring with its session", c)
			}
		})
	}
}
