package rooms_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

// fakeJoinStore is a JoinStore with function fields.
type fakeJoinStore struct {
	load   func(ctx context.Context, roomID, clientKey string) (rooms.JoinState, error)
	commit func(ctx context.Context, j rooms.Join) error
}

func (f *fakeJoinStore) LoadJoin(ctx context.Context, roomID, clientKey string) (rooms.JoinState, error) {
	return f.load(ctx, roomID, clientKey)
}

func (f *fakeJoinStore) CommitJoin(ctx context.Context, j rooms.Join) error { return f.commit(ctx, j) }

func TestJoinSeats(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 500, time.UTC)
	ids := chat.NewIDs()
	room := chat.Room{ID: ids.New(now), WorkspaceID: ids.New(now), ChannelID: ids.New(now), Status: chat.RoomActive, ExpiresAt: now.Add(48 * time.Hour)}
	const me = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
	seats := func(live, expired int, mine bool) map[string]rooms.Seat {
		m := map[string]rooms.Seat{}
		for i := 0; i < live; i++ {
			id := "L" + strconv.Itoa(i)
			m[id] = rooms.Seat{GuestID: id, ExpiresAt: now.Add(time.Hour)}
		}
		for i := 0; i < expired; i++ {
			id := "E" + strconv.Itoa(i)
			// The first expires exactly now: expired.
			m[id] = rooms.Seat{GuestID: id, ExpiresAt: now.Add(-time.Duration(i) * time.Second)}
		}
		if mine {
			m[me] = rooms.Seat{GuestID: me, ExpiresAt: now.Add(-time.Hour)}
		}
		return m
	}
	prior := &rooms.PriorGuest{GuestID: me, TokenHash: "old", CreatedAt: now.Add(-30 * time.Hour)}
	for _, tc := range []struct {
		name        string
		state       rooms.JoinState
		wantErr     string
		wantRelease int
	}{
		{"first seat of the room", rooms.JoinState{}, "", 0},
		{"the 100th session", rooms.JoinState{Seats: seats(99, 0, false)}, "", 0},
		{"the 101st session", rooms.JoinState{Seats: seats(100, 0, false)}, chat.ERoomFull, 0},
		{"the 101st with one expired seat", rooms.JoinState{Seats: seats(99, 1, false)}, "", 1},
		{"expired seats are released, at most 50", rooms.JoinState{Seats: seats(20, 80, false)}, "", 50},
		{"re-join in a full room keeps its seat", rooms.JoinState{Prior: prior, Seats: seats(99, 0, true)}, "", 0},
		{"re-join without a seat in a full room", rooms.JoinState{Prior: prior, Seats: seats(100, 0, false)}, chat.ERoomFull, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *rooms.Join
			store := &fakeJoinStore{
				load: func(context.Context, string, string) (rooms.JoinState, error) {
					st := tc.state
					st.Room = room
					return st, nil
				},
				commit: func(_ context.Context, j rooms.Join) error { got = &j; return nil },
			}
			svc := &rooms.Service{Store: store, IDs: ids, Now: func() time.Time { return now }}
			res, err := svc.Join(context.Background(), rooms.JoinRequest{RoomID: room.ID, Nickname: "Ana", PreferredLanguage: "en", ClientID: "6f9619ff-8b86-d011-b42d-00cf4fc964ff"})
			if tc.wantErr != "" {
				if !chat.IsCode(err, tc.wantErr) || got != nil {
					t.Fatalf("got %v (committed %v), want %s and nothing written", err, got != nil, tc.wantErr)
				}
				if err.Error() != "room_full: The Temporary Room is full." {
					t.Fatalf("message %q", err.Error())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Release) != tc.wantRelease {
				t.Fatalf("released %d seats, want %d", len(got.Release), tc.wantRelease)
			}
			for i, s := range got.Release {
				if now.Before(s.ExpiresAt) || i > 0 && s.ExpiresAt.Before(got.Release[i-1].ExpiresAt) {
					t.Fatalf("released %+v: want only expired seats, earliest first", got.Release)
				}
			}
			if got.Seat.GuestID != res.Guest.ID || got.Seat.Token != chat.SeatToken(got.TokenHash) {
				t.Fatalf("seat %+v, want the guest's with its new token", got.Seat)
			}
			// The seat never frees before the session expires.
			if got.Seat.ExpiresAt.Before(res.SessionExpires) || got.Seat.ExpiresAt.Sub(res.SessionExpires) >= time.Second || got.Seat.ExpiresAt.Nanosecond() != 0 {
				t.Fatalf("seat expires %v for a session expiring %v, want it rounded up to the second", got.Seat.ExpiresAt, res.SessionExpires)
			}
		})
	}
}

// TestJoinRetriesLostRaces: a lost race is loaded again and retried; a join
// that keeps losing is a 503, never a 409 or a duplicate.
func TestJoinRetriesLostRaces(t *testing.T) {
	now := time.Now()
	ids := chat.NewIDs()
	room := chat.Room{ID: ids.New(now), Status: chat.RoomActive, ExpiresAt: now.Add(time.Hour)}
	for _, losses := range []int{1, 3, 100} {
		loads, commits := 0, 0
		store := &fakeJoinStore{
			load: func(context.Context, string, string) (rooms.JoinState, error) {
				loads++
				return rooms.JoinState{Room: room}, nil
			},
			commit: func(context.Context, rooms.Join) error {
				commits++
				if commits <= losses {
					return chat.Errorf(chat.EConflict, "lost")
				}
				return nil
			},
		}
		svc := &rooms.Service{Store: store, IDs: ids, Now: time.Now}
		_, err := svc.Join(context.Background(), rooms.JoinRequest{RoomID: room.ID, Nickname: "Ana", PreferredLanguage: "en"})
		switch {
		case losses < 10 && err != nil:
			t.Fatalf("%d lost races: %v, want success", losses, err)
		case losses >= 10 && !chat.IsCode(err, chat.EUnavailable):
			t.Fatalf("%d lost races: %v, want %s", losses, err, chat.EUnavailable)
		case loads != commits:
			t.Fatalf("%d loads for %d commits, want a load before each", loads, commits)
		}
	}
}
