package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
)

// MaxCounterShards bounds the shards of a ShardedCounter: 16 items take
// 16,000 writes a second, and one BatchGetItem reads them all.
const MaxCounterShards = 16

// CounterShards is the number of shards of a counter whose window allows
// limit: one per perShard of it (at least one, at most MaxCounterShards),
// so that no shard is allowed more than perShard in a window unless the
// counter has all its shards.
func CounterShards(limit, perShard int64) int {
	if limit <= perShard || perShard <= 0 {
		return 1
	}
	return int(min((limit+perShard-1)/perShard, MaxCounterShards))
}

// ShardedCounter is one window (a quota's minute, a budget's day) of a
// counter that may count at most Limit, spread over Shards items so that
// no one partition key takes all its writes. Shard i may count at most its
// Allowance(i); the allowances add up to Limit exactly, and every spend is
// a conditional write that keeps its shard within its allowance, so the
// counter never passes Limit whatever the concurrency. Shard 0 is the item
// Base, shard i > 0 the item Base#i (sort key MetaSK), its count in Attr.
type ShardedCounter struct {
	Base   string
	Attr   string
	Limit  int64
	Shards int
	// TTL is the items' ttl (unix seconds).
	TTL int64
}

// Key is the partition key of shard i.
func (c ShardedCounter) Key(i int) string {
	if i == 0 {
		return c.Base
	}
	return c.Base + "#" + strconv.Itoa(i)
}

// Allowance is what shard i may count: Limit split evenly, the remainder
// to the first shards.
func (c ShardedCounter) Allowance(i int) int64 {
	n := int64(c.Shards)
	a := c.Limit / n
	if int64(i) < c.Limit%n {
		a++
	}
	return a
}

// Piece is what one spend counted on one shard.
type Piece struct {
	Shard int
	N     int64
}

// Spent is the outcome of a spend.
type Spent struct {
	// OK says whether the spend was counted.
	OK bool
	// Remaining is what the window has left after it: exact when the
	// counter has one shard or when the spend read every shard, otherwise
	// estimated from its own shard (its share left, scaled to the whole).
	// 0 when the spend was refused for want of room.
	Remaining int64
	// Pieces are where it was counted (one, unless no single shard had
	// room for it), for GiveBack.
	Pieces []Piece
}

// CounterCache remembers, in one instance, upper bounds of what the shards
// of recent windows have left: a shard known full is not written again, and
// a spend larger than what all of them have left is refused without a call.
// What a shard has left only shrinks within a window, except when GiveBack
// returns some, which this instance learns at once and others within
// counterCacheTTL. Its zero value is ready to use.
type CounterCache struct {
	mu sync.Mutex
	m  map[string]*counterSeen
}

// counterCacheTTL is how long an instance trusts what it learnt of a
// window's shards.
const counterCacheTTL = time.Minute

// counterSeen is what an instance knows of one window: left[i] is an upper
// bound of shard i's room (-1: unknown).
type counterSeen struct {
	limit int64
	left  []int64
	until time.Time
}

// bounds returns a copy of what is known of c's shards (-1: unknown).
func (cc *CounterCache) bounds(c ShardedCounter, now time.Time) []int64 {
	left := make([]int64, c.Shards)
	for i := range left {
		left[i] = -1
	}
	if cc == nil {
		return left
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if s, ok := cc.m[c.Base]; ok && s.limit == c.Limit && len(s.left) == c.Shards && now.Before(s.until) {
		copy(left, s.left)
	}
	return left
}

// learn records that shard i has at most left (-1 forgets it).
func (cc *CounterCache) learn(c ShardedCounter, now time.Time, i int, left int64) {
	if cc == nil {
		return
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	s, ok := cc.m[c.Base]
	if !ok || s.limit != c.Limit || len(s.left) != c.Shards || !now.Before(s.until) {
		if cc.m == nil || len(cc.m) >= 4096 {
			cc.m = map[string]*counterSeen{}
		}
		s = &counterSeen{limit: c.Limit, left: make([]int64, c.Shards), until: now.Add(counterCacheTTL)}
		for j := range s.left {
			s.left[j] = -1
		}
		cc.m[c.Base] = s
	}
	s.left[i] = left
}

// forget drops what is known of c's window.
func (cc *CounterCache) forget(c ShardedCounter) {
	if cc == nil {
		return
	}
	cc.mu.Lock()
	delete(cc.m, c.Base)
	cc.mu.Unlock()
}

// maxSpendRounds bounds how often a spend reads the shards again after
// losing a race for the room it saw.
const maxSpendRounds = 5

// Spend counts n on c when the window has room for it, and never lets c
// pass its limit. It writes one random shard not known full (one
// conditional UpdateItem); only when that shard has no room does it read
// every shard (one BatchGetItem, strongly consistent) and count n on a
// shard that has room, or, when none alone has but together they do, on
// several in one TransactWriteItems. A spend is refused (OK false) only
// when the shards read, or known to this instance (cache), have less than n
// left in all. cache may be nil. Errors: EUnavailable, EInternal.
func (t *Table) Spend(ctx context.Context, c ShardedCounter, n int64, cache *CounterCache) (Spent, error) {
	if n <= 0 || c.Shards < 1 {
		return Spent{}, chat.Internal(fmt.Errorf("dynamo: spend %d on %s over %d shards", n, c.Base, c.Shards))
	}
	if n > c.Limit {
		return Spent{}, nil
	}
	now := time.Now()
	left := c.boundsFor(cache, now)
	// First, one shard at random among those that may have room.
	open, sum := c.open(left, n)
	if sum < n {
		return Spent{}, nil
	}
	if len(open) > 0 {
		i := open[rand.IntN(len(open))]
		count, ok, err := t.addTo(ctx, c, i, n)
		if err != nil {
			return Spent{}, err
		}
		a := c.Allowance(i)
		if ok {
			cache.learn(c, now, i, a-count)
			return Spent{OK: true, Remaining: c.estimate(a, count, n), Pieces: []Piece{{i, n}}}, nil
		}
		cache.learn(c, now, i, n-1)
		left[i] = n - 1
		if _, sum := c.open(left, n); sum < n {
			// No other shard can have it (one shard: the limit is reached).
			return Spent{}, nil
		}
	}
	// Then, near the limit, by what every shard has left.
	for round := range maxSpendRounds {
		if round > 0 {
			// Lost a race for the room read: let the winners finish.
			select {
			case <-ctx.Done():
				return Spent{}, Fail("spend on "+c.Base, ctx.Err())
			case <-time.After(time.Duration(round*(10+rand.IntN(20))) * time.Millisecond):
			}
		}
		room, err := t.rooms(ctx, c)
		if err != nil {
			return Spent{}, err
		}
		var total int64
		for i, r := range room {
			cache.learn(c, now, i, r)
			total += r
		}
		if total < n {
			return Spent{}, nil
		}
		pieces := c.split(room, n)
		if len(pieces) == 1 {
			i := pieces[0].Shard
			count, ok, err := t.addTo(ctx, c, i, n)
			if err != nil {
				return Spent{}, err
			}
			if ok {
				cache.learn(c, now, i, c.Allowance(i)-count)
				return Spent{OK: true, Remaining: max(0, total-n), Pieces: pieces}, nil
			}
			continue
		}
		ok, err := t.addPieces(ctx, c, pieces)
		if err != nil {
			return Spent{}, err
		}
		if ok {
			return Spent{OK: true, Remaining: max(0, total-n), Pieces: pieces}, nil
		}
	}
	return Spent{}, chat.Unavailable(fmt.Errorf("dynamo: spend %d on %s: lost the race for room %d times", n, c.Base, maxSpendRounds))
}

// boundsFor is cache's bounds of c's shards, each at most its allowance.
func (c ShardedCounter) boundsFor(cache *CounterCache, now time.Time) []int64 {
	left := cache.bounds(c, now)
	for i, l := range left {
		if l > c.Allowance(i) {
			left[i] = c.Allowance(i)
		}
	}
	return left
}

// open returns the shards whose bound in left (-1: unknown, up to the
// allowance) may take n, and what all may have left together.
func (c ShardedCounter) open(left []int64, n int64) (open []int, sum int64) {
	for i, l := range left {
		if l < 0 {
			l = c.Allowance(i)
		}
		if l >= n {
			open = append(open, i)
		}
		sum += l
	}
	return open, sum
}

// estimate is what the window has left after a spend of n brought a shard
// of allowance a to count: exact with one shard; otherwise the other shards
// are taken to have spent in the same proportion as this one before it.
func (c ShardedCounter) estimate(a, count, n int64) int64 {
	if c.Shards == 1 {
		return max(0, a-count)
	}
	used := n + (count-n)*c.Limit/a
	return min(max(0, c.Limit-used), c.Limit-n)
}

// split places n on the shards with room: on one shard chosen at random
// among those with room enough, else on the fewest shards, the roomiest
// first. room must add up to at least n.
func (c ShardedCounter) split(room []int64, n int64) []Piece {
	var fit []int
	for i, r := range room {
		if r >= n {
			fit = append(fit, i)
		}
	}
	if len(fit) > 0 {
		return []Piece{{fit[rand.IntN(len(fit))], n}}
	}
	order := make([]int, len(room))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(room[b] - room[a]) })
	var pieces []Piece
	for _, i := range order {
		if n == 0 {
			break
		}
		if p := min(room[i], n); p > 0 {
			pieces = append(pieces, Piece{i, p})
			n -= p
		}
	}
	return pieces
}

// addTo adds n to shard i on condition that it stays within its
// allowance, and returns the shard's new count; ok is false when it had no
// room.
func (t *Table) addTo(ctx context.Context, c ShardedCounter, i int, n int64) (count int64, ok bool, err error) {
	out, err := t.Client.UpdateItem(ctx, c.update(t.Name, i, n))
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, Fail("count "+c.Key(i), err)
	}
	return GetN(out.Attributes, c.Attr), true, nil
}

// update is the conditional UpdateItem adding n to shard i.
func (c ShardedCounter) update(table string, i int, n int64) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName:                &table,
		Key:                      Key(c.Key(i), MetaSK),
		UpdateExpression:         aws.String("ADD #c :n SET #ttl = if_not_exists(#ttl, :ttl)"),
		ConditionExpression:      aws.String("attribute_not_exists(#c) OR #c <= :max"),
		ExpressionAttributeNames: map[string]string{"#c": c.Attr, "#ttl": AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":n": Num(n), ":max": Num(c.Allowance(i) - n), ":ttl": Num(c.TTL),
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	}
}

// addPieces counts pieces in one transaction, each on condition that its
// shard stays within its allowance; ok is false when one had no room any
// more or another transaction held a shard.
func (t *Table) addPieces(ctx context.Context, c ShardedCounter, pieces []Piece) (bool, error) {
	items := make([]types.TransactWriteItem, len(pieces))
	for k, p := range pieces {
		u := c.update(t.Name, p.Shard, p.N)
		items[k] = types.TransactWriteItem{Update: &types.Update{TableName: u.TableName, Key: u.Key,
			UpdateExpression: u.UpdateExpression, ConditionExpression: u.ConditionExpression,
			ExpressionAttributeNames: u.ExpressionAttributeNames, ExpressionAttributeValues: u.ExpressionAttributeValues}}
	}
	_, err := t.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if reasons := Cancellation(err); reasons != nil {
		return false, nil
	}
	if err != nil {
		return false, Fail("count "+c.Base+" on several shards", err)
	}
	return true, nil
}

// rooms reads every shard (one BatchGetItem, strongly consistent) and
// returns what each has left.
func (t *Table) rooms(ctx context.Context, c ShardedCounter) ([]int64, error) {
	keys := make([]map[string]types.AttributeValue, c.Shards)
	for i := range keys {
		keys[i] = Key(c.Key(i), MetaSK)
	}
	items, err := t.BatchGetProjected(ctx, "read "+c.Base, keys, "pk, #c", map[string]string{"#c": c.Attr})
	if err != nil {
		return nil, err
	}
	room := make([]int64, c.Shards)
	for i := range room {
		room[i] = c.Allowance(i)
	}
	for _, it := range items {
		pk := GetS(it, AttrPK)
		for i := range room {
			if c.Key(i) == pk {
				room[i] = max(0, c.Allowance(i)-GetN(it, c.Attr))
			}
		}
	}
	return room, nil
}

// GiveBack returns pieces a Spend counted (ADD -n on each shard, one
// UpdateItem a piece), and forgets what cache knew of the window. Errors:
// EUnavailable, EInternal.
func (t *Table) GiveBack(ctx context.Context, c ShardedCounter, pieces []Piece, cache *CounterCache) error {
	cache.forget(c)
	for _, p := range pieces {
		_, err := t.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 &t.Name,
			Key:                       Key(c.Key(p.Shard), MetaSK),
			UpdateExpression:          aws.String("ADD #c :n"),
			ExpressionAttributeNames:  map[string]string{"#c": c.Attr},
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": Num(-p.N)},
		})
		if err != nil {
			return Fail("give back to "+c.Key(p.Shard), err)
		}
	}
	return nil
}
