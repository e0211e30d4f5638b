package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/rooms"
)

// TestGuestLimitsThroughTheHandlers: the 101st session of a room is a 409
// and a guest's 31st post in a minute a 429, each in the contract's shape
// (every answer is checked against openapi.yaml by w.do).
func TestGuestLimitsThroughTheHandlers(t *testing.T) {
	w := newRoomWorld(t) // one guest has joined w.room
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := 1; i < rooms.MaxLiveSessions; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			rec := w.do(t, "POST", w.joinPath(w.room), fmt.Sprintf(`{"nickname":"Guest %d","preferred_language":"en"}`, i), nil)
			if rec.Code != http.StatusCreated {
				t.Errorf("join %d: %d %s", i, rec.Code, rec.Body)
			}
		}()
	}
	wg.Wait()
	rec := w.do(t, "POST", w.joinPath(w.room), `{"nickname":"One too many","preferred_language":"en","client_id":"6f9619ff-8b86-d011-b42d-00cf4fc964ff"}`, nil)
	want := `{"message":"The Temporary Room is full.","errors":{"code":["room_full"]}}`
	if rec.Code != http.StatusConflict || strings.TrimSpace(rec.Body.String()) != want {
		t.Fatalf("the 101st join: %d %s, want 409 %s", rec.Code, rec.Body, want)
	}
	// Another room is not affected.
	if rec := w.do(t, "POST", w.joinPath(w.room2), `{"nickname":"Bo","preferred_language":"en"}`, nil); rec.Code != http.StatusCreated {
		t.Fatalf("join of another room: %d %s", rec.Code, rec.Body)
	}

	// Stay inside one window: start with at least 15 s of it left.
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 15*time.Second {
		time.Sleep(left + 100*time.Millisecond)
	}
	hdr := map[string]string{"X-Service-Guest-Token": w.guestToken}
	for i := 1; i <= rooms.PostsPerMinute; i++ {
		if rec := w.do(t, "POST", w.msgsPath(w.room), `{"content":"hello"}`, hdr); rec.Code != http.StatusCreated {
			t.Fatalf("post %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	rec = w.do(t, "POST", w.msgsPath(w.room), `{"content":"one too many"}`, hdr)
	var body struct {
		Errors struct {
			Code []string `json:"code"`
		} `json:"errors"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != http.StatusTooManyRequests || len(body.Errors.Code) != 1 || body.Errors.Code[0] != "quota_exceeded" || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("post 31: %d %s (Retry-After %q), want 429 quota_exceeded with Retry-After", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
	}
}
