package chat_test

import (
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
)

// TestIDsNeverCollide: one generator shared by goroutines that all ask for
// ids of the same millisecond gives each id once, valid, and increasing in
// the order each goroutine got them (the generator is monotonic within a
// millisecond and locked). Two posts can therefore only meet on one id if
// one write is the other's retry.
func TestIDsNeverCollide(t *testing.T) {
	ids := chat.NewIDs()
	at := time.Date(2026, 11, 28, 10, 0, 0, 123_000_000, time.UTC)
	const goroutines, each = 8, 2000
	got := make([][]string, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				got[g] = append(got[g], ids.New(at))
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for g, list := range got {
		for i, id := range list {
			if !chat.ValidID(id) || seen[id] {
				t.Fatalf("goroutine %d id %d: %q, valid %v, seen before %v", g, i, id, chat.ValidID(id), seen[id])
			}
			seen[id] = true
			if i > 0 && id <= list[i-1] {
				t.Fatalf("goroutine %d: %s after %s, want increasing", g, id, list[i-1])
			}
		}
	}
	if len(seen) != goroutines*each {
		t.Fatalf("%d distinct ids, want %d", len(seen), goroutines*each)
	}
}
