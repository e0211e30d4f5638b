package rooms_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

// fakeCounter is a PostCounter with a function field.
type fakeCounter struct {
	count func(ctx context.Context, guestID string, window time.Time, limit int) (bool, error)
}

func (f fakeCounter) CountPost(ctx context.Context, guestID string, window time.Time, limit int) (bool, error) {
	return f.count(ctx, guestID, window, limit)
}

func TestPostRate(t *testing.T) {
	minute := time.Date(2026, 11, 22, 10, 7, 0, 0, time.UTC)
	s := chat.GuestSession{Guest: chat.Guest{ID: "G1", RoomID: roomA, Nickname: "Ana", PreferredLanguage: "en"}}
	room := chat.Room{ID: roomA, WorkspaceID: "W1", ChannelID: "C1"}
	for _, tc := range []struct {
		name      string
		at        time.Duration // into the minute
		wantRetry string
	}{
		{"at the window's start", 0, "60"},
		{"mid-window, rounded up", 15*time.Second + 200*time.Millisecond, "45"},
		{"half a second before the end", 59*time.Second + 500*time.Millisecond, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := minute.Add(tc.at)
			counts := map[string]int{}
			stored := 0
			p := &rooms.Poster{IDs: chat.NewIDs(), Now: func() time.Time { return now },
				Store: fakeWriter{put: func(context.Context, chat.Message) error { stored++; return nil }},
				Rate: fakeCounter{count: func(_ context.Context, guest string, window time.Time, limit int) (bool, error) {
					if !window.Equal(minute) || limit != rooms.PostsPerMinute {
						t.Fatalf("counted in window %v with limit %d, want %v and %d", window, limit, minute, rooms.PostsPerMinute)
					}
					k := guest + window.String()
					if counts[k] >= limit {
						return false, nil
					}
					counts[k]++
					return true, nil
				}}}
			for i := 1; i <= rooms.PostsPerMinute; i++ {
				if _, err := p.Post(context.Background(), s, room, "hello", nil); err != nil {
					t.Fatalf("post %d: %v", i, err)
				}
			}
			_, err := p.Post(context.Background(), s, room, "one too many", nil)
			var e *chat.Error
			if !errors.As(err, &e) || e.Code != chat.EQuotaExceeded || e.Message != "Too many messages. A guest posts at most 30 messages a minute." {
				t.Fatalf("post 31: got %v, want %s", err, chat.EQuotaExceeded)
			}
			if got := e.RetryAfter; strconv.Itoa(got) != tc.wantRetry {
				t.Fatalf("Retry-After %d, want %s", got, tc.wantRetry)
			}
			if stored != rooms.PostsPerMinute {
				t.Fatalf("stored %d messages, want %d", stored, rooms.PostsPerMinute)
			}
			// Invalid content is refused before it is counted.
			if _, err := p.Post(context.Background(), s, room, strings.Repeat("x", 40001), nil); !chat.IsCode(err, chat.EValidation) {
				t.Fatalf("too long a post: got %v, want %s", err, chat.EValidation)
			}
			// Another guest has its own count.
			other := s
			other.Guest.ID = "G2"
			if _, err := p.Post(context.Background(), other, room, "hi", nil); err != nil {
				t.Fatalf("another guest's post: %v", err)
			}
		})
	}
	p := &rooms.Poster{IDs: chat.NewIDs(), Now: time.Now, Store: fakeWriter{put: func(context.Context, chat.Message) error { return nil }},
		Rate: fakeCounter{count: func(context.Context, string, time.Time, int) (bool, error) {
			return false, chat.Unavailable(errors.New("down"))
		}}}
	if _, err := p.Post(context.Background(), s, room, "hi", nil); !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("failing counter: got %v, want %s", err, chat.EUnavailable)
	}
}
