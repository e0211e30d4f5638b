package dynamo_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

func newRoom(t *testing.T, s *storetest.Stores, ids *chat.IDs, status string, expires time.Time) chat.Room {
	t.Helper()
	now := time.Now()
	r := chat.Room{ID: ids.New(now), WorkspaceID: ids.New(now), ChannelID: ids.New(now), Name: "Support call", Status: status, ExpiresAt: expires.UTC()}
	if err := s.PutRoomForTest(context.Background(), r); err != nil {
		t.Fatalf("put room: %v", err)
	}
	return r
}

func TestJoinAgainstDynamo(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(dynamodb.NewFromConfig(st.AWS), st.Table)
	ids := chat.NewIDs()
	ctx := context.Background()
	room := newRoom(t, store, ids, chat.RoomActive, time.Now().Add(2*time.Hour))
	svc := &rooms.Service{Store: store.Rooms, IDs: ids, Now: time.Now}

	budget := func(what string) {
		t.Helper()
		if calls := st.Calls.Calls(); len(calls) != 2 || calls[0] != "DynamoDB.BatchGetItem" || calls[1] != "DynamoDB.TransactWriteItems" {
			t.Fatalf("%s called %v, want BatchGetItem then TransactWriteItems", what, calls)
		}
		st.Calls.Reset()
	}
	st.Calls.Reset()
	first, err := svc.Join(ctx, rooms.JoinRequest{RoomID: room.ID, Nickname: "Ana", PreferredLanguage: "es-ES", ClientID: "6F9619FF-8B86-D011-B42D-00CF4FC964FF"})
	if err != nil {
		t.Fatalf("join: %v", err)
	}
	budget("a first join")
	if first.Rejoined {
		t.Fatalf("first join reported as re-join")
	}
	if !first.SessionExpires.Equal(room.ExpiresAt) {
		t.Fatalf("session expires %v, want the room's %v", first.SessionExpires, room.ExpiresAt)
	}
	again, err := svc.Join(ctx, rooms.JoinRequest{RoomID: room.ID, Nickname: "Ana B", PreferredLanguage: "es-MX", ClientID: "6f9619ff-8b86-d011-b42d-00cf4fc964ff"})
	if err != nil {
		t.Fatalf("re-join: %v", err)
	}
	budget("a re-join")
	if !again.Rejoined || again.Guest.ID != first.Guest.ID {
		t.Fatalf("re-join: got guest %s rejoined=%v, want %s rejoined=true", again.Guest.ID, again.Rejoined, first.Guest.ID)
	}
	if again.Token == first.Token {
		t.Fatalf("re-join returned the same token")
	}
	other, err := svc.Join(ctx, rooms.JoinRequest{RoomID: room.ID, Nickname: "Bo", PreferredLanguage: "en"})
	if err != nil {
		t.Fatalf("join without client id: %v", err)
	}
	budget("a join without client id")
	if other.Guest.ID == first.Guest.ID {
		t.Fatalf("a join without client id reused guest %s", other.Guest.ID)
	}
}

func TestJoinRefusesUnavailableRooms(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(dynamodb.NewFromConfig(st.AWS), st.Table)
	ids := chat.NewIDs()
	svc := &rooms.Service{Store: store.Rooms, IDs: ids, Now: time.Now}
	for name, id := range map[string]string{
		"unknown": ids.New(time.Now()),
		"expired": newRoom(t, store, ids, chat.RoomActive, time.Now().Add(-time.Minute)).ID,
		"closed":  newRoom(t, store, ids, chat.RoomClosed, time.Now().Add(time.Hour)).ID,
		"garbage": "../../etc/passwd",
	} {
		_, err := svc.Join(context.Background(), rooms.JoinRequest{RoomID: id, Nickname: "Ana", PreferredLanguage: "en"})
		if !chat.IsCode(err, chat.ERoomExpired) {
			t.Errorf("%s room: got %v, want %s", name, err, chat.ERoomExpired)
		}
	}
}

// TestConcurrentJoinsWithOneClientIDMakeOneGuest: 50 joins at once with one
// client id make one guest; one is the first join, the 49 others re-joins
// of it, none fails; each re-join revokes the token before it, so exactly
// one token works at the end, and the guest holds one seat.
func TestConcurrentJoinsWithOneClientIDMakeOneGuest(t *testing.T) {
	g := newGuestStack(t)
	const n, rounds = 50, 4
	for round := 0; round < rounds; round++ {
		room := g.room(t, time.Now().Add(time.Hour))
		results := make([]rooms.JoinResult, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = g.join.Join(context.Background(), rooms.JoinRequest{RoomID: room.ID, Nickname: "Ana",
					PreferredLanguage: "en", ClientID: "11111111-2222-3333-4444-55555555555" + strconv.Itoa(round)})
			}()
		}
		wg.Wait()
		guests, firsts := map[string]bool{}, 0
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: join %d: %v, want every join to succeed", round, i, err)
			}
			guests[results[i].Guest.ID] = true
			if !results[i].Rejoined {
				firsts++
			}
		}
		if len(guests) != 1 || firsts != 1 {
			t.Fatalf("round %d: guests %v and %d first joins, want one guest and one first join (201) among %d", round, guests, firsts, n)
		}
		live := 0
		for _, res := range results {
			_, _, err := g.auth(time.Now()).Authenticate(context.Background(), room.ID, res.Token)
			switch {
			case err == nil:
				live++
			case !chat.IsCode(err, chat.EUnauthenticated):
				t.Fatalf("round %d: authenticate: %v", round, err)
			}
		}
		if live != 1 {
			t.Fatalf("round %d: %d of %d tokens work, want exactly one (each re-join revokes the one before)", round, live, n)
		}
		seats, err := g.store.SeatsForTest(context.Background(), room.ID)
		if err != nil || len(seats) != 1 {
			t.Fatalf("round %d: seats %v (%v), want one", round, seats, err)
		}
	}
}

// clock is a settable clock for the seat tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// fill joins n guests without client id, a few at a time.
func fill(t *testing.T, svc *rooms.Service, room chat.Room, n int) []rooms.JoinResult {
	t.Helper()
	out := make([]rooms.JoinResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = svc.Join(context.Background(), rooms.JoinRequest{RoomID: room.ID, Nickname: "Guest " + strconv.Itoa(i), PreferredLanguage: "en"})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("join %d: %v", i, err)
		}
	}
	return out
}

func TestRoomHoldsAtMost100LiveSessions(t *testing.T) {
	g := newGuestStack(t)
	ctx := context.Background()
	room := g.room(t, time.Now().Add(48*time.Hour))
	const client = "6f9619ff-8b86-d011-b42d-00cf4fc964ff"
	first := g.guest(t, room, "Ana", "es", client)
	fill(t, g.join, room, rooms.MaxLiveSessions-1) // the 100th session is the last of these

	g.st.Calls.Reset()
	_, err := g.join.Join(ctx, rooms.JoinRequest{RoomID: room.ID, Nickname: "One too many", PreferredLanguage: "en"})
	if !chat.IsCode(err, chat.ERoomFull) {
		t.Fatalf("the 101st session: got %v, want %s", err, chat.ERoomFull)
	}
	if calls := g.st.Calls.Calls(); len(calls) != 1 || calls[0] != "DynamoDB.BatchGetItem" {
		t.Fatalf("a full room's join called %v, want one BatchGetItem", calls)
	}
	_, err = g.join.Join(ctx, rooms.JoinRequest{RoomID: room.ID, Nickname: "Bo", PreferredLanguage: "en", ClientID: "00000000-0000-0000-0000-000000000001"})
	if !chat.IsCode(err, chat.ERoomFull) {
		t.Fatalf("a new client id in a full room: got %v, want %s", err, chat.ERoomFull)
	}
	// A re-join replaces its own seat.
	again, err := g.join.Join(ctx, rooms.JoinRequest{RoomID: room.ID, Nickname: "Ana", PreferredLanguage: "es", ClientID: client})
	if err != nil || !again.Rejoined || again.Guest.ID != first.Guest.ID {
		t.Fatalf("re-join in a full room: %+v, %v; want guest %s re-joined", again.Guest, err, first.Guest.ID)
	}
	if _, _, err := g.auth(time.Now()).Authenticate(ctx, room.ID, first.Token); !chat.IsCode(err, chat.EUnauthenticated) {
		t.Fatalf("the token the re-join replaced: got %v, want %s", err, chat.EUnauthenticated)
	}
	if _, _, err := g.auth(time.Now()).Authenticate(ctx, room.ID, again.Token); err != nil {
		t.Fatalf("the re-join's token: %v", err)
	}
	seats, err := g.store.SeatsForTest(ctx, room.ID)
	if err != nil || len(seats) != rooms.MaxLiveSessions {
		t.Fatalf("%d seats (%v), want %d", len(seats), err, rooms.MaxLiveSessions)
	}
}

// TestConcurrentJoinsNeverPassTheLimit: ten joins at once into a room with
// 99 live sessions: exactly one gets the last seat.
func TestConcurrentJoinsNeverPassTheLimit(t *testing.T) {
	g := newGuestStack(t)
	room := g.room(t, time.Now().Add(48*time.Hour))
	fill(t, g.join, room, rooms.MaxLiveSessions-1)
	const n = 10
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = g.join.Join(context.Background(), rooms.JoinRequest{RoomID: room.ID, Nickname: "Racer", PreferredLanguage: "en"})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !chat.IsCode(err, chat.ERoomFull):
			t.Fatalf("concurrent join: %v, want success or %s", err, chat.ERoomFull)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of %d concurrent joins at 99 sessions succeeded, want 1", ok, n)
	}
	if seats, _ := g.store.SeatsForTest(context.Background(), room.ID); len(seats) != rooms.MaxLiveSessions {
		t.Fatalf("%d seats, want %d", len(seats), rooms.MaxLiveSessions)
	}
}

// TestExpiredSessionFreesItsSeat: a session 24 hours old has expired; its
// seat goes to the next join, with no background job.
func TestExpiredSessionFreesItsSeat(t *testing.T) {
	g := newGuestStack(t)
	ctx := context.Background()
	t0 := time.Now().UTC()
	room := g.room(t, t0.Add(72*time.Hour))
	c := &clock{now: t0}
	svc := &rooms.Service{Store: g.store.Rooms, IDs: g.ids, Now: c.Now}
	const client = "6f9619ff-8b86-d011-b42d-00cf4fc964ff"
	early, err := svc.Join(ctx, rooms.JoinRequest{RoomID: room.ID, Nickname: "Early", PreferredLanguage: "en", ClientID: client})
	if err != nil {
		t.Fatal(err)
	}
	c.Set(t0.Add(time.Hour))
	fill(t, svc, room, rooms.MaxLiveSessions-1)

	// A second before the early session's expiry the room is still full.
	c.Set(early.SessionExpires.Add(-time.Second))
	if _, err := svc.Join(ctx, rooms.JoinRequest{RoomID: room.ID, Nickname: "Late", PreferredLanguage: "en"}); !chat.IsCode(err, chat.ERoomFull) {
		t.Fatalf("join before the expiry: got %v, want %s", err, chat.ERoomFull)
	}
	c.Set(early.SessionExpires.Add(time.Second))
	late, err := svc.Join(ctx, rooms.JoinRequest{RoomID: room.ID, Nickname: "Late", PreferredLanguage: "en"})
	if err != nil {
		t.Fatalf("join after the early session expired: %v", err)
	}
	seats, err := g.store.SeatsForTest(ctx, room.ID)
	if err != nil || len(seats) != rooms.MaxLiveSessions {
		t.Fatalf("%d seats (%v), want %d", len(seats), err, rooms.MaxLiveSessions)
	}
	if _, held := seats[early.Guest.ID]; held {
		t.Fatalf("the expired session's seat is still held")
	}
	if _, held := seats[late.Guest.ID]; !held {
		t.Fatalf("the late guest holds no seat")
	}
	// The room is full again; the early guest, whose session has expired,
	// needs a seat to re-join like anyone else.
	if _, err := svc.Join(ctx, rooms.JoinRequest{RoomID: room.ID, Nickname: "Early", PreferredLanguage: "en", ClientID: client}); !chat.IsCode(err, chat.ERoomFull) {
		t.Fatalf("re-join after the seat was given away: got %v, want %s", err, chat.ERoomFull)
	}
}
