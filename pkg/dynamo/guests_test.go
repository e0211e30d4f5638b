package dynamo_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

// guestStack is one test's table with a store, an id generator and the
// real join service on it.
type guestStack struct {
	st    *stacktest.Stack
	store *storetest.Stores
	ids   *chat.IDs
	join  *rooms.Service
}

func newGuestStack(t *testing.T) *guestStack {
	t.Helper()
	st := stacktest.New(t)
	store := storetest.New(dynamodb.NewFromConfig(st.AWS), st.Table)
	ids := chat.NewIDs()
	return &guestStack{st: st, store: store, ids: ids, join: &rooms.Service{Store: store.Rooms, IDs: ids, Now: time.Now}}
}

// Room writes an active room of its own workspace and channel.
func (g *guestStack) room(t *testing.T, expires time.Time) chat.Room {
	t.Helper()
	now := time.Now()
	r := chat.Room{ID: g.ids.New(now), WorkspaceID: g.ids.New(now), ChannelID: g.ids.New(now), Name: "Support call",
		Status: chat.RoomActive, ExpiresAt: expires.UTC().Truncate(time.Second)}
	if err := g.store.PutRoomForTest(context.Background(), r); err != nil {
		t.Fatalf("put room: %v", err)
	}
	return r
}

// guest joins room through the real join and returns the result.
func (g *guestStack) guest(t *testing.T, room chat.Room, nickname, lang, clientID string) rooms.JoinResult {
	t.Helper()
	res, err := g.join.Join(context.Background(), rooms.JoinRequest{RoomID: room.ID, Nickname: nickname, PreferredLanguage: lang, ClientID: clientID})
	if err != nil {
		t.Fatalf("join %s: %v", nickname, err)
	}
	return res
}

func (g *guestStack) auth(now time.Time) *rooms.GuestAuth {
	return &rooms.GuestAuth{Sessions: g.store.Rooms, Now: func() time.Time { return now }}
}

func TestGuestSessionAgainstDynamo(t *testing.T) {
	g := newGuestStack(t)
	ctx := context.Background()
	room := g.room(t, time.Now().Add(48*time.Hour))
	ana := g.guest(t, room, "Ana", "es-MX", "")

	g.st.Calls.Reset()
	s, got, err := g.auth(time.Now()).Authenticate(ctx, room.ID, ana.Token)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	if n := g.st.Calls.Total(); n != 1 {
		t.Fatalf("authentication made %d AWS calls %v, want 1", n, g.st.Calls.Calls())
	}
	if calls := g.st.Calls.Calls(); calls[0] != "DynamoDB.BatchGetItem" {
		t.Fatalf("authentication called %v, want one BatchGetItem", calls)
	}
	want := chat.Guest{ID: ana.Guest.ID, RoomID: room.ID, WorkspaceID: room.WorkspaceID, ChannelID: room.ChannelID,
		Nickname: "Ana", PreferredLanguage: "es-MX"}
	if s.Guest != want {
		t.Fatalf("guest %+v, want %+v", s.Guest, want)
	}
	if s.TokenHash != chat.HashToken(ana.Token) || !s.ExpiresAt.Equal(ana.SessionExpires) {
		t.Fatalf("session hash %s expires %v, want the token's hash and %v", s.TokenHash, s.ExpiresAt, ana.SessionExpires)
	}
	if got != room {
		t.Fatalf("room %+v, want %+v", got, room)
	}

	// 24 hours on, the session has expired though the room has not.
	if _, _, err := g.auth(time.Now().Add(25*time.Hour)).Authenticate(ctx, room.ID, ana.Token); !chat.IsCode(err, chat.EUnauthenticated) {
		t.Fatalf("expired session: got %v, want %s", err, chat.EUnauthenticated)
	}
	g.st.Calls.Reset()
	if _, _, err := g.auth(time.Now()).Authenticate(ctx, room.ID, "gst_never_issued"); !chat.IsCode(err, chat.EUnauthenticated) {
		t.Fatalf("unknown token: got %v, want %s", err, chat.EUnauthenticated)
	}
	if n := g.st.Calls.Total(); n != 1 {
		t.Fatalf("an unknown token cost %d AWS calls, want 1", n)
	}
}

func TestRejoinRetiresTheOldToken(t *testing.T) {
	g := newGuestStack(t)
	ctx := context.Background()
	room := g.room(t, time.Now().Add(time.Hour))
	const client = "6f9619ff-8b86-d011-b42d-00cf4fc964ff"
	first := g.guest(t, room, "Ana", "es-ES", client)
	second := g.guest(t, room, "Ana B", "es-MX", client)
	auth := g.auth(time.Now())
	if _, _, err := auth.Authenticate(ctx, room.ID, first.Token); !chat.IsCode(err, chat.EUnauthenticated) {
		t.Fatalf("the replaced token: got %v, want %s", err, chat.EUnauthenticated)
	}
	s, _, err := auth.Authenticate(ctx, room.ID, second.Token)
	if err != nil {
		t.Fatalf("the new token: %v", err)
	}
	if s.Guest.ID != first.Guest.ID || s.Guest.Nickname != "Ana B" || s.Guest.PreferredLanguage != "es-MX" {
		t.Fatalf("the new token's guest %+v, want %s as Ana B in es-MX", s.Guest, first.Guest.ID)
	}
}

func TestGuestTokenRoomRulesAgainstDynamo(t *testing.T) {
	g := newGuestStack(t)
	ctx := context.Background()
	room := g.room(t, time.Now().Add(2*time.Hour))
	other := g.room(t, time.Now().Add(2*time.Hour))
	ana := g.guest(t, room, "Ana", "es", "")

	if _, _, err := g.auth(time.Now()).Authenticate(ctx, other.ID, ana.Token); !chat.IsCode(err, chat.EForbidden) {
		t.Errorf("token of another room: got %v, want %s", err, chat.EForbidden)
	}
	if _, _, err := g.auth(time.Now()).Authenticate(ctx, g.ids.New(time.Now()), ana.Token); !chat.IsCode(err, chat.EForbidden) {
		t.Errorf("token on an unknown room: got %v, want %s", err, chat.EForbidden)
	}
	// Past the room's expiry (and so the session's too): the room is gone.
	if _, _, err := g.auth(time.Now().Add(3*time.Hour)).Authenticate(ctx, room.ID, ana.Token); !chat.IsCode(err, chat.ERoomExpired) {
		t.Errorf("expired room: got %v, want %s", err, chat.ERoomExpired)
	}
	closed := room
	closed.Status = chat.RoomClosed
	if err := g.store.PutRoomForTest(ctx, closed); err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.auth(time.Now()).Authenticate(ctx, room.ID, ana.Token); !chat.IsCode(err, chat.ERoomExpired) {
		t.Errorf("closed room: got %v, want %s", err, chat.ERoomExpired)
	}
}

// TestCountPostIsAtomic: 45 posts at once in one window: exactly 30 are
// counted; the next window starts again.
func TestCountPostIsAtomic(t *testing.T) {
	g := newGuestStack(t)
	window := time.Now().UTC().Truncate(time.Minute)
	guest := g.ids.New(window)
	const n = 45
	var counted atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := g.store.Rooms.CountPost(context.Background(), guest, window, rooms.PostsPerMinute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				counted.Add(1)
			}
		}()
	}
	wg.Wait()
	if got := counted.Load(); got != rooms.PostsPerMinute {
		t.Fatalf("%d of %d concurrent posts counted, want %d", got, n, rooms.PostsPerMinute)
	}
	if ok, err := g.store.Rooms.CountPost(context.Background(), guest, window.Add(time.Minute), rooms.PostsPerMinute); err != nil || !ok {
		t.Fatalf("first post of the next window: %v, %v; want counted", ok, err)
	}
	if ok, err := g.store.Rooms.CountPost(context.Background(), g.ids.New(window), window, rooms.PostsPerMinute); err != nil || !ok {
		t.Fatalf("another guest's post: %v, %v; want counted", ok, err)
	}
}

// TestGuestPostCallBudget: a post is one BatchGetItem (the token), one
// UpdateItem (the count) and one PutItem (the message); a refused 31st post
// stores nothing: two calls.
func TestGuestPostCallBudget(t *testing.T) {
	g := newGuestStack(t)
	ctx := context.Background()
	room := g.room(t, time.Now().Add(time.Hour))
	ana := g.guest(t, room, "Ana", "en", "")
	// A fixed clock inside one window, whatever the wall clock does.
	now := time.Now().UTC().Truncate(time.Minute).Add(20 * time.Second)
	poster := &rooms.Poster{Store: g.store, Rate: g.store.Rooms, IDs: g.ids, Now: func() time.Time { return now }}
	post := func() error {
		s, r, err := g.auth(now).Authenticate(ctx, room.ID, ana.Token)
		if err != nil {
			return err
		}
		_, err = poster.Post(ctx, s, r, "hello <world> \u2028 😀", nil)
		return err
	}
	for i := 1; i <= rooms.PostsPerMinute; i++ {
		g.st.Calls.Reset()
		if err := post(); err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
		if calls := g.st.Calls.Calls(); i == rooms.PostsPerMinute && strings.Join(calls, " ") != "DynamoDB.BatchGetItem DynamoDB.UpdateItem DynamoDB.PutItem" {
			t.Fatalf("post %d called %v, want BatchGetItem, UpdateItem, PutItem", i, calls)
		}
	}
	g.st.Calls.Reset()
	err := post()
	var e *chat.Error
	if !errors.As(err, &e) || e.Code != chat.EQuotaExceeded || e.RetryAfter != 40 {
		t.Fatalf("post 31: got %v, want %s with Retry-After 40", err, chat.EQuotaExceeded)
	}
	if calls := g.st.Calls.Calls(); strings.Join(calls, " ") != "DynamoDB.BatchGetItem DynamoDB.UpdateItem" {
		t.Fatalf("a refused post called %v, want BatchGetItem, UpdateItem", calls)
	}
	page, err := g.store.Rooms.ListMessages(ctx, room.ChannelID, "", 100)
	if err != nil || len(page.Items) != rooms.PostsPerMinute {
		t.Fatalf("%d messages stored (%v), want %d", len(page.Items), err, rooms.PostsPerMinute)
	}
}
