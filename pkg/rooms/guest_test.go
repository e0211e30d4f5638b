package rooms_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

// fakeSessions is a SessionStore with a function field.
type fakeSessions struct {
	get func(ctx context.Context, tokenHash, roomID string) (chat.GuestSession, *chat.Room, error)
}

func (f fakeSessions) GuestSession(ctx context.Context, tokenHash, roomID string) (chat.GuestSession, *chat.Room, error) {
	return f.get(ctx, tokenHash, roomID)
}

const (
	roomA = "01JDZ8Y7K3Q4W5E6R7T8Y9A0RA"
	roomB = "01JDZ8Y7K3Q4W5E6R7T8Y9A0RB"
	roomC = "01JDZ8Y7K3Q4W5E6R7T8Y9A0RC"
)

func TestAuthenticate(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	live, dead := now.Add(time.Hour), now.Add(-time.Second)
	rooms3 := map[string]chat.Room{
		roomA: {ID: roomA, ChannelID: "CA", Status: chat.RoomActive, ExpiresAt: now.Add(2 * time.Hour)},
		roomB: {ID: roomB, ChannelID: "CB", Status: chat.RoomActive, ExpiresAt: now.Add(2 * time.Hour)},
		roomC: {ID: roomC, ChannelID: "CC", Status: chat.RoomClosed, ExpiresAt: now.Add(2 * time.Hour)},
	}
	sessions := map[string]chat.GuestSession{}
	addSession := func(token, room string, exp time.Time) {
		h := chat.HashToken(token)
		sessions[h] = chat.GuestSession{TokenHash: h, ExpiresAt: exp, Guest: chat.Guest{ID: "G-" + token, RoomID: room, Nickname: "Ana"}}
	}
	addSession("gst_a", roomA, live)
	addSession("gst_a_expired", roomA, dead)
	addSession("gst_a_now", roomA, now) // expires exactly now: expired
	addSession("gst_b", roomB, live)
	addSession("gst_b_expired", roomB, dead)
	addSession("gst_c", roomC, live)
	addSession("gst_gone", "01JDZ8Y7K3Q4W5E6R7T8Y9A0ZZ", live)
	// A store that matched loosely: the session's hash is not the token's.
	sessions[chat.HashToken("gst_loose")] = chat.GuestSession{TokenHash: chat.HashToken("other"), ExpiresAt: live, Guest: chat.Guest{RoomID: roomA}}

	lookups := 0
	auth := &rooms.GuestAuth{Now: func() time.Time { return now }, Sessions: fakeSessions{get: func(_ context.Context, hash, roomID string) (chat.GuestSession, *chat.Room, error) {
		lookups++
		var room *chat.Room
		if r, ok := rooms3[roomID]; ok {
			room = &r
		}
		s, ok := sessions[hash]
		if !ok {
			return chat.GuestSession{}, room, chat.Errorf(chat.ENotFound, "no session")
		}
		return s, room, nil
	}}}

	for _, tc := range []struct {
		name, room, token, code string
		lookup                  bool
	}{
		{"valid", roomA, "gst_a", "", true},
		{"valid with surrounding space", roomA, "  gst_a ", "", true},
		{"missing", roomA, "", chat.EUnauthenticated, false},
		{"blank", roomA, "   ", chat.EUnauthenticated, false},
		{"inner space", roomA, "gst a", chat.EUnauthenticated, false},
		{"control character", roomA, "gst\x01a", chat.EUnauthenticated, false},
		{"non-ASCII", roomA, "gst_ä", chat.EUnauthenticated, false},
		{"too long", roomA, "gst_" + strings.Repeat("a", chat.MaxTokenLen), chat.EUnauthenticated, false},
		{"unknown", roomA, "gst_nobody", chat.EUnauthenticated, true},
		{"workspace token", roomA, "wsk_member", chat.EUnauthenticated, true},
		{"loosely matched", roomA, "gst_loose", chat.EUnauthenticated, true},
		{"expired", roomA, "gst_a_expired", chat.EUnauthenticated, true},
		{"expires exactly now", roomA, "gst_a_now", chat.EUnauthenticated, true},
		{"another room's token", roomA, "gst_b", chat.EForbidden, true},
		{"another room's token on an unknown room", "01JDZ8Y7K3Q4W5E6R7T8Y9A0YY", "gst_b", chat.EForbidden, true},
		{"another room's token on a closed room", roomC, "gst_b", chat.EForbidden, true},
		{"another room's expired token", roomA, "gst_b_expired", chat.EUnauthenticated, true},
		{"own room closed", roomC, "gst_c", chat.ERoomExpired, true},
		{"own room deleted", "01JDZ8Y7K3Q4W5E6R7T8Y9A0ZZ", "gst_gone", chat.ERoomExpired, true},
		{"room id not a ULID", "../" + roomA, "gst_a", chat.ERoomExpired, false},
		{"room id lower case", strings.ToLower(roomA), "gst_a", chat.ERoomExpired, false},
		{"no token and a bad room id", "nope", "", chat.EUnauthenticated, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookups = 0
			s, room, err := auth.Authenticate(context.Background(), tc.room, tc.token)
			if got := chat.ErrorCode(err); got != tc.code {
				t.Fatalf("code %q, want %q (%v)", got, tc.code, err)
			}
			if (lookups > 0) != tc.lookup || lookups > 1 {
				t.Fatalf("%d lookups, want lookup=%v (at most one)", lookups, tc.lookup)
			}
			if tc.code == "" && (s.Guest.ID != "G-gst_a" || room.ID != roomA || room.ChannelID != "CA") {
				t.Fatalf("got guest %q room %+v, want G-gst_a in %s", s.Guest.ID, room, roomA)
			}
		})
	}
}

func TestAuthenticateMessages(t *testing.T) {
	auth := &rooms.GuestAuth{Now: time.Now, Sessions: fakeSessions{get: func(context.Context, string, string) (chat.GuestSession, *chat.Room, error) {
		return chat.GuestSession{}, nil, chat.Errorf(chat.ENotFound, "none")
	}}}
	_, _, err := auth.Authenticate(context.Background(), roomA, "gst_x")
	var e *chat.Error
	if !errors.As(err, &e) || e.Message != "Unauthenticated." {
		t.Fatalf("got %v, want the message Unauthenticated.", err)
	}
	if e := rooms.ErrGuestForbidden().(*chat.Error); e.Message != "This action is unauthorized." || e.Code != chat.EForbidden {
		t.Fatalf("forbidden error %+v", e)
	}
}

func TestAuthenticatePassesStorageFailuresOn(t *testing.T) {
	auth := &rooms.GuestAuth{Now: time.Now, Sessions: fakeSessions{get: func(context.Context, string, string) (chat.GuestSession, *chat.Room, error) {
		return chat.GuestSession{}, nil, chat.Unavailable(errors.New("dynamo down"))
	}}}
	_, _, err := auth.Authenticate(context.Background(), roomA, "gst_x")
	if !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("got %v, want %s", err, chat.EUnavailable)
	}
}
