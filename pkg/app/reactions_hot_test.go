package app_test

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/reactionstore"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/reactions"
)

// The hot message: 1,000 readers react to one message at once through
// reactions.Service on the real local AWS (owners user:0..999): every call
// succeeds and the count is exactly 1,000; then 1,000 removals leave 0,
// never below. reaction_shards grew, and the layout spread the writes:
// every reader item is in one of 16 partitions (none holds them all) and
// no count shard took every reaction (each shard's number is at most the
// reactions written to it, and several hold some).
func TestHotMessageReactions(t *testing.T) {
	w := newMemberWorld(t)
	id := w.post(t, bearer(w.ben), "We shipped!")
	// Lambda gives each invocation its own client; one client shared by
	// 1,000 goroutines would run out of the SDK's client-side retry quota
	// (a budget per client, not a DynamoDB answer), so this one keeps none.
	db := dynamodb.NewFromConfig(w.st.AWS, func(o *dynamodb.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) { so.RateLimiter, so.MaxAttempts = ratelimit.None, 8 })
	})
	svc := &reactions.Service{Store: reactionstore.New(db, w.st.Table)}
	const n = 1000
	run := func(add bool) {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tg := reactions.Target{WorkspaceID: w.ws.ID, ChannelID: w.general, MessageID: id,
					Author: chat.Author{Type: chat.AuthorUser, ID: strconv.Itoa(i), Name: "R" + strconv.Itoa(i)}}
				var res reactions.Result
				var err error
				if add {
					res, err = svc.Add(context.Background(), tg, ":tada:")
				} else {
					res, err = svc.Remove(context.Background(), tg, url.PathEscape("🎉"))
				}
				if err == nil && !res.Changed {
					err = fmt.Errorf("reader %d: nothing changed", i)
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("add=%v reader %d: %v", add, i, err)
			}
		}
	}
	start := time.Now()
	run(true)
	t.Logf("1,000 concurrent reactions in %v", time.Since(start))
	m := w.message(t, w.general, id)
	counts, err := w.store().Counts(context.Background(), id, m.ReactionShards)
	if err != nil || counts["🎉"] != n {
		t.Fatalf("count %v %v, want 1000", counts, err)
	}
	if got := w.reactionsOf(t, w.general, id, "user:7"); len(got) != 1 || got[0] != (chat.Reaction{Emoji: "🎉", Count: n, Me: true}) {
		t.Fatalf("user:7 sees %v", got)
	}
	if m.ReactionShards < 2 || m.ReactionShards > reactions.MaxShards {
		t.Fatalf("reaction_shards %d, want grown (2..16)", m.ReactionShards)
	}
	shards := w.scanPK(t, "RXC#"+id+"#")
	maxShard, used := 0, 0
	for _, it := range shards {
		v, _ := strconv.Atoi(it["n:🎉"].(*types.AttributeValueMemberN).Value)
		maxShard = max(maxShard, v)
		if v > 0 {
			used++
		}
	}
	if maxShard >= n || used < 2 {
		t.Fatalf("shards %d used, the fullest counts %d: one item took every reaction", used, maxShard)
	}
	readers := map[string]int{}
	for _, it := range w.scanPK(t, "RXR#"+id+"#") {
		readers[it["pk"].(*types.AttributeValueMemberS).Value]++
	}
	biggest := 0
	for _, c := range readers {
		biggest = max(biggest, c)
	}
	if len(readers) != 16 || biggest >= n/4 {
		t.Fatalf("reader items over %d partitions, the biggest holds %d", len(readers), biggest)
	}
	t.Logf("S=%d shards, %d used, fullest %d; readers over %d partitions, biggest %d", m.ReactionShards, used, maxShard, len(readers), biggest)

	start = time.Now()
	run(false)
	t.Logf("1,000 concurrent removals in %v", time.Since(start))
	m = w.message(t, w.general, id)
	counts, err = w.store().Counts(context.Background(), id, m.ReactionShards)
	if err != nil || counts["🎉"] != 0 {
		t.Fatalf("after the removals: %v %v, want 0", counts, err)
	}
	if got := w.reactionsOf(t, w.general, id, "user:7"); len(got) != 0 {
		t.Fatalf("after the removals user:7 sees %v", got)
	}
	// A removal of an absent reaction writes nothing: still 0, not -1.
	if res, err := svc.Remove(context.Background(), reactions.Target{WorkspaceID: w.ws.ID, ChannelID: w.general, MessageID: id,
		Author: chat.Author{Type: chat.AuthorUser, ID: "7"}}, ":tada:"); err != nil || res.Changed {
		t.Fatalf("removal again: %+v %v", res, err)
	}
	if counts, _ = w.store().Counts(context.Background(), id, m.ReactionShards); counts["🎉"] != 0 {
		t.Fatalf("count %d after a removal again, want 0", counts["🎉"])
	}
}

// An HTTP burst: 60 real members and 20 guests react to one message at
// once through the handlers; every answer is 201 and the count is theirs.
// Then the AWS calls of one PUT and one DELETE.
func TestReactionBurstAndCalls(t *testing.T) {
	w := newMemberWorld(t)
	ws := &w.doc.Workspaces[0]
	for i := 0; i < 60; i++ {
		ws.Users = append(ws.Users, fixture.User{Name: "Member " + strconv.Itoa(i), PreferredLanguage: "en"})
	}
	if err := w.doc.Complete(chat.NewIDs(), time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, u := range ws.Users {
		if !contains(ws.Channels[0].Members, u.ID) {
			ws.Channels[0].Members = append(ws.Channels[0].Members, u.ID)
		}
	}
	if err := storetest.New(w.app.DB, w.app.Table).Fixture.Apply(context.Background(), w.doc, time.Now()); err != nil {
		t.Fatal(err)
	}
	var hdrs []map[string]string
	for _, u := range ws.Users[2:] {
		hdrs = append(hdrs, bearer(u))
	}
	for i := 0; i < 20; i++ {
		hdrs = append(hdrs, w.joinGuest(t, "en"))
	}
	id := w.post(t, bearer(w.ben), "burst")
	var wg sync.WaitGroup
	codes := make([]int, len(hdrs))
	for i, h := range hdrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := w.reactPath(w.general, id, ":rocket:")
			if _, guest := h["X-Service-Guest-Token"]; guest {
				path = w.guestReactPath(id, ":rocket:")
			}
			rec := w.serve("PUT", path, h)
			codes[i] = rec.Code
			if rec.Code != 201 {
				t.Errorf("reader %d: %d %s", i, rec.Code, rec.Body)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if got := w.reactionsOf(t, w.general, id, ""); len(got) != 1 || got[0].Count != len(hdrs) {
		t.Fatalf("after the burst: %v, want 🚀 × %d", got, len(hdrs))
	}

	// The calls of one PUT (a new emoji, then one already registered) and
	// one DELETE, member path.
	ana := bearer(w.ana)
	fresh := w.post(t, bearer(w.ben), "calls")
	calls := w.calls(t, "PUT, new emoji", func() { w.react(t, "PUT", w.reactPath(w.general, fresh, ":eyes:"), ana, 201) })
	want := []string{"DynamoDB.GetItem", "DynamoDB.GetItem", "DynamoDB.UpdateItem", "DynamoDB.TransactWriteItems", "DynamoDB.BatchGetItem"}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("PUT of a new emoji: %v, want %v", calls, want)
	}
	calls = w.calls(t, "PUT, registered emoji", func() { w.react(t, "PUT", w.reactPath(w.general, fresh, ":eyes:"), bearer(w.ben), 201) })
	want = []string{"DynamoDB.GetItem", "DynamoDB.GetItem", "DynamoDB.TransactWriteItems", "DynamoDB.BatchGetItem"}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("PUT of a registered emoji: %v, want %v", calls, want)
	}
	calls = w.calls(t, "PUT, already there", func() { w.react(t, "PUT", w.reactPath(w.general, fresh, ":eyes:"), ana, 200) })
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("PUT already there: %v, want %v (the cancelled transaction writes nothing)", calls, want)
	}
	calls = w.calls(t, "DELETE", func() { w.react(t, "DELETE", w.reactPath(w.general, fresh, ":eyes:"), ana, 204) })
	want = []string{"DynamoDB.GetItem", "DynamoDB.GetItem", "DynamoDB.TransactWriteItems"}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("DELETE: %v, want %v", calls, want)
	}
	calls = w.calls(t, "DELETE, never registered", func() { w.react(t, "DELETE", w.reactPath(w.general, fresh, ":bug:"), ana, 204) })
	if want := []string{"DynamoDB.GetItem", "DynamoDB.GetItem"}; !reflect.DeepEqual(calls, want) {
		t.Fatalf("DELETE of an emoji never used: %v, want %v", calls, want)
	}
	guest := hdrs[len(hdrs)-1]
	calls = w.calls(t, "guest PUT", func() { w.react(t, "PUT", w.guestReactPath(fresh, ":eyes:"), guest, 201) })
	if len(calls) == 0 || !strings.Contains(strings.Join(calls, ","), "TransactWriteItems") {
		t.Fatalf("guest PUT: %v", calls)
	}
}
