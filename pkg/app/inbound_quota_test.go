package app_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRaisedQuotaSpreadsOverShards: a workspace whose quota is raised to
// 300,000 a minute (5,000 a second) counts its requests on many items, not
// one (one partition key takes about 1,000 writes a second): 48 concurrent
// posts write at least 8 distinct quota keys of the window, and the counts
// still add up to exactly 48. Each answer's X-RateLimit-Remaining is an
// estimate near the truth.
func TestRaisedQuotaSpreadsOverShards(t *testing.T) {
	const quota, posts = 300_000, 48
	w := newWorld(t, quota)
	if s := time.Now().Second(); s > 50 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	window := strconv.FormatInt(time.Now().Truncate(time.Minute).Unix(), 10)
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		codes     = map[int]int{}
		remaining []int
	)
	for i := range posts {
		wg.Go(func() {
			rec := w.postStatic(t, fmt.Sprintf(`{"content":"load %d"}`, i), nil)
			r, err := strconv.Atoi(rec.Header().Get("X-RateLimit-Remaining"))
			mu.Lock()
			defer mu.Unlock()
			codes[rec.Code]++
			if err == nil {
				remaining = append(remaining, r)
			}
		})
	}
	wg.Wait()
	if codes[202] != posts {
		t.Fatalf("answers %v, want %d accepted", codes, posts)
	}
	for _, r := range remaining {
		if r < quota-10*posts || r >= quota {
			t.Errorf("X-RateLimit-Remaining %d, want within %d of %d", r, 10*posts, quota-posts)
		}
	}
	keys, total := 0, 0
	for _, it := range w.snapshot(t) {
		if !strings.HasPrefix(it.pk, "QUOTA#"+w.ws.ID+"#"+window) {
			continue
		}
		keys++
		n, err := strconv.Atoi(it.attrs["count"])
		if err != nil {
			t.Fatalf("quota item %s: count %q", it.pk, it.attrs["count"])
		}
		total += n
	}
	if keys < 8 {
		t.Errorf("%d concurrent posts wrote %d quota keys, want at least 8", posts, keys)
	}
	if total != posts {
		t.Errorf("the quota keys count %d requests, want exactly %d", total, posts)
	}
	t.Logf("%d posts counted on %d keys", posts, keys)
}
