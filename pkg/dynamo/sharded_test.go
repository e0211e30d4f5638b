package dynamo_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/dynamo"
)

// shardCounts reads every shard of c: its count by shard.
func shardCounts(t *testing.T, st *stacktest.Stack, c dynamo.ShardedCounter) []int64 {
	t.Helper()
	tab := dynamo.New(st.DB, st.Table)
	out := make([]int64, c.Shards)
	for i := range out {
		items, err := tab.BatchGet(context.Background(), "read", []map[string]types.AttributeValue{dynamo.Key(c.Key(i), dynamo.MetaSK)})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 1 {
			out[i] = dynamo.GetN(items[0], c.Attr)
		}
	}
	return out
}

func TestCounterShards(t *testing.T) {
	for _, c := range []struct {
		limit, per int64
		want       int
	}{{5, 500, 1}, {500, 500, 1}, {600, 500, 2}, {5_000, 500, 10}, {300_000, 500, 16}, {2_000_000, 250_000, 8}} {
		if got := dynamo.CounterShards(c.limit, c.per); got != c.want {
			t.Errorf("CounterShards(%d, %d) = %d, want %d", c.limit, c.per, got, c.want)
		}
	}
	c := dynamo.ShardedCounter{Limit: 47, Shards: 5}
	var sum int64
	for i := range c.Shards {
		if a := c.Allowance(i); a < 9 || a > 10 {
			t.Errorf("Allowance(%d) = %d, want 9 or 10", i, a)
		}
		sum += c.Allowance(i)
	}
	if sum != c.Limit {
		t.Errorf("allowances add up to %d, want the limit %d", sum, c.Limit)
	}
}

// TestSpendIsExactUnderConcurrency: 80 concurrent spends of one on a
// counter of 45 over 5 shards admit exactly 45, each shard within its
// allowance, whichever shard each spend tried first; then this instance
// refuses without a call.
func TestSpendIsExactUnderConcurrency(t *testing.T) {
	st := stacktest.New(t)
	tab := dynamo.New(st.DB, st.Table)
	c := dynamo.ShardedCounter{Base: "QUOTA#01JDZ8Y7K3Q4W5E6R7T8Y9A0FW#1795416960", Attr: "count", Limit: 45, Shards: 5,
		TTL: time.Now().Add(time.Hour).Unix()}
	var cache dynamo.CounterCache
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for range 80 {
		wg.Go(func() {
			s, err := tab.Spend(context.Background(), c, 1, &cache)
			switch {
			case err != nil:
				t.Errorf("spend: %v", err)
			case s.OK:
				ok.Add(1)
			default:
				refused.Add(1)
				if s.Remaining != 0 {
					t.Errorf("refused with %d remaining", s.Remaining)
				}
			}
		})
	}
	wg.Wait()
	if ok.Load() != 45 || refused.Load() != 35 {
		t.Fatalf("%d spent, %d refused; want 45 and 35", ok.Load(), refused.Load())
	}
	var total int64
	for i, n := range shardCounts(t, st, c) {
		if n != c.Allowance(i) {
			t.Errorf("shard %d counts %d, want its allowance %d", i, n, c.Allowance(i))
		}
		total += n
	}
	if total != 45 {
		t.Errorf("shards count %d, want 45", total)
	}
	st.Calls.Reset()
	if s, err := tab.Spend(context.Background(), c, 1, &cache); err != nil || s.OK {
		t.Fatalf("spend past the limit: %+v, %v", s, err)
	}
	if n := st.Calls.Total(); n != 0 {
		t.Errorf("a spend this instance knows to be past the limit made %d calls (%v), want none", n, st.Calls.Calls())
	}
	// Another instance (no cache) learns it with at most two calls.
	st.Calls.Reset()
	if s, err := tab.Spend(context.Background(), c, 1, nil); err != nil || s.OK {
		t.Fatalf("spend past the limit: %+v, %v", s, err)
	}
	if n := st.Calls.Total(); n > 2 {
		t.Errorf("a refused spend made %d calls (%v), want at most 2", n, st.Calls.Calls())
	}
}

// TestSpendSplitsWhatNoShardHolds: a spend larger than any one shard's room
// but within the window's is counted over several shards in one
// transaction; the counter never passes its limit, and GiveBack returns it.
func TestSpendSplitsWhatNoShardHolds(t *testing.T) {
	st := stacktest.New(t)
	tab := dynamo.New(st.DB, st.Table)
	ctx := context.Background()
	c := dynamo.ShardedCounter{Base: "TRBUDGET#01JDZ8Y7K3Q4W5E6R7T8Y9A0FW#2026-11-28", Attr: "chars", Limit: 100, Shards: 4,
		TTL: time.Now().Add(time.Hour).Unix()}
	var cache dynamo.CounterCache
	for _, step := range []struct {
		n      int64
		want   bool
		pieces int // at least
	}{{20, true, 1}, {20, true, 1}, {50, true, 2}, {11, false, 0}, {10, true, 1}, {1, false, 0}} {
		s, err := tab.Spend(ctx, c, step.n, &cache)
		if err != nil {
			t.Fatalf("spend %d: %v", step.n, err)
		}
		if s.OK != step.want || len(s.Pieces) < step.pieces {
			t.Fatalf("spend %d: %+v, want ok %v on at least %d shards", step.n, s, step.want, step.pieces)
		}
		var sum int64
		for _, p := range s.Pieces {
			sum += p.N
		}
		if s.OK && sum != step.n {
			t.Fatalf("spend %d: pieces %+v add up to %d", step.n, s.Pieces, sum)
		}
		if step.n == 50 {
			if err := tab.GiveBack(ctx, c, s.Pieces, &cache); err != nil {
				t.Fatal(err)
			}
			if s, err := tab.Spend(ctx, c, 50, &cache); err != nil || !s.OK {
				t.Fatalf("spend 50 after giving it back: %+v, %v", s, err)
			}
		}
	}
	var total int64
	for i, n := range shardCounts(t, st, c) {
		if n > c.Allowance(i) {
			t.Errorf("shard %d counts %d, past its allowance %d", i, n, c.Allowance(i))
		}
		total += n
	}
	if total != 100 {
		t.Errorf("shards count %d, want 100", total)
	}
}

// TestConcurrentSplitSpends: six concurrent spends of 30 on a counter of
// 100 over 4 shards (25 each), none of which fits one shard: exactly three
// are counted, each over several shards, and the rest refused, none failed.
func TestConcurrentSplitSpends(t *testing.T) {
	st := stacktest.New(t)
	tab := dynamo.New(st.DB, st.Table)
	c := dynamo.ShardedCounter{Base: "TRBUDGET#01JDZ8Y7K3Q4W5E6R7T8Y9A0FW#2026-11-29", Attr: "chars", Limit: 100, Shards: 4,
		TTL: time.Now().Add(time.Hour).Unix()}
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			s, err := tab.Spend(context.Background(), c, 30, nil)
			switch {
			case err != nil:
				t.Errorf("spend: %v", err)
			case s.OK:
				ok.Add(1)
			default:
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 3 || refused.Load() != 3 {
		t.Errorf("%d spent, %d refused; want 3 and 3", ok.Load(), refused.Load())
	}
	var total int64
	for _, n := range shardCounts(t, st, c) {
		total += n
	}
	if total != 90 {
		t.Errorf("shards count %d, want 90", total)
	}
}
