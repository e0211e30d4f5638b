package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
)

// TestPendingIndexHas64Shards: message ids spread their untranslated
// markers over 64 index partitions (one index partition takes about 1,000
// writes a second, and a marker is written twice: set with the message,
// removed once translated), and the sweep reads every one of them: a
// marker due in each of the shards 00, 16, 40 and 63 is listed.
func TestPendingIndexHas64Shards(t *testing.T) {
	ids := chat.NewIDs()
	now := time.Now()
	seen := map[string]bool{}
	for range 2000 {
		seen[dynamo.PendingShard(ids.New(now))] = true
	}
	if len(seen) != 64 {
		t.Errorf("2,000 messages marked %d shards, want 64", len(seen))
	}
	for i := range 64 {
		if s := fmt.Sprintf("PENDING#%02d", i); !seen[s] {
			t.Errorf("no message marked %s", s)
		}
	}

	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	channel, ws := ids.New(now), ids.New(now)
	want := map[string]bool{}
	for _, shard := range []int{0, 16, 40, 63} {
		id := ids.New(now)
		want[id] = true
		seed(t, st, map[string]any{"pk": "CHAN#" + channel, "sk": "MSG#" + id, "id": id, "workspace_id": ws,
			"source_language": "en", "pending_shard": fmt.Sprintf("PENDING#%02d", shard),
			"pending_due": dynamo.PendingDue(now, id)})
	}
	st.Calls.Reset()
	due, err := store.Translation.DuePending(context.Background(), now.Add(time.Second), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range due {
		delete(want, p.Job.MessageID)
	}
	if len(want) != 0 {
		t.Errorf("the sweep missed %d of 4 due markers: %v", len(want), want)
	}
	if n := st.Calls.Total(); n != 64 {
		t.Errorf("DuePending made %d calls, want 64 (one Query per shard)", n)
	}
}
