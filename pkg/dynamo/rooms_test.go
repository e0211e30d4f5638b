package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/rooms"
)

func newRoom(t *testing.T, s *dynamo.Store, ids *chat.IDs, status string, expires time.Time) chat.Room {
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
	store := dynamo.New(dynamodb.NewFromConfig(st.AWS), st.Table)
	ids := chat.NewIDs()
	ctx := context.Background()
	room := newRoom(t, store, ids, chat.RoomActive, time.Now().Add(2*time.Hour))
	svc := &rooms.Service{Store: store, IDs: ids, Now: time.Now}

	st.Calls.Reset()
	first, err := svc.Join(ctx, rooms.JoinRequest{RoomID: room.ID, Nickname: "Ana", PreferredLanguage: "es-ES", ClientID: "6F9619FF-8B86-D011-B42D-00CF4FC964FF"})
	if err != nil {
		t.Fatalf("join: %v", err)
	}
	if got := st.Calls.Total(); got > 2 {
		t.Fatalf("join made %d AWS calls (%v), want at most 2", got, st.Calls.Calls())
	}
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
	if other.Guest.ID == first.Guest.ID {
		t.Fatalf("a join without client id reused guest %s", other.Guest.ID)
	}
}

func TestJoinRefusesUnavailableRooms(t *testing.T) {
	st := stacktest.New(t)
	store := dynamo.New(dynamodb.NewFromConfig(st.AWS), st.Table)
	ids := chat.NewIDs()
	svc := &rooms.Service{Store: store, IDs: ids, Now: time.Now}
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

func TestConcurrentFirstJoinsWithOneClientIDMakeOneGuest(t *testing.T) {
	st := stacktest.New(t)
	store := dynamo.New(dynamodb.NewFromConfig(st.AWS), st.Table)
	ids := chat.NewIDs()
	room := newRoom(t, store, ids, chat.RoomActive, time.Now().Add(time.Hour))
	svc := &rooms.Service{Store: store, IDs: ids, Now: time.Now}
	const n = 8
	got := make(chan string, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			res, err := svc.Join(context.Background(), rooms.JoinRequest{RoomID: room.ID, Nickname: "Ana", PreferredLanguage: "en", ClientID: "11111111-2222-3333-4444-555555555555"})
			if err != nil {
				errs <- err
				got <- ""
				return
			}
			got <- res.Guest.ID
		}()
	}
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		if id := <-got; id != "" {
			seen[id] = true
		}
	}
	close(errs)
	for err := range errs {
		if !chat.IsCode(err, chat.EUnavailable) {
			t.Errorf("concurrent join: unexpected error %v", err)
		}
	}
	if len(seen) != 1 {
		t.Fatalf("concurrent joins with one client id made guests %v, want exactly one", seen)
	}
}
