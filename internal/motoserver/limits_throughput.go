package motoserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// DynamoDB's per-partition throughput, as documented for both capacity
// modes ("Each partition on the table can serve up to 3,000 read request
// units or 1,000 write request units"): the proxy keeps it per partition
// key value (a single item never splits, and one partition key value is
// what a hot key is), scaled down by the factor Throughput sets.
const (
	partitionWCU = 1000
	partitionRCU = 3000
	// burst is how many seconds of unused capacity a partition key keeps.
	// DynamoDB keeps up to 300 s of it (burst capacity); a local run of a
	// few seconds would never reach its limit with that much, so the proxy
	// keeps 1 s: a key may take a second's worth at once, then its rate.
	burst = 1.0
	// writeUnit and readUnit are the sizes one WCU and one RCU cover.
	writeUnit = 1024
	readUnit  = 4096
)

// The answer to a request past a partition key's throughput. An on-demand
// table (the template's table is PAY_PER_REQUEST) answers it, as a
// provisioned one does, with ProvisionedThroughputExceededException: HTTP
// 400, its ThrottlingReasons naming TableWriteKeyRangeThroughputExceeded or
// TableReadKeyRangeThroughputExceeded ("KeyRangeThroughputExceeded: the
// request rate directed at a specific partition key value has exceeded the
// internal partition-level throughput limits", API Reference,
// ThrottlingReason; "Key range throughput exceeded (hot partitions) ...
// affecting both provisioned and on-demand modes", Developer Guide, DynamoDB
// throttling resolution guide). ThrottlingException is DynamoDB's answer to
// control-plane calls past their rate, not to data-plane ones, and
// RequestLimitExceeded is the account's quota. The message is the one
// on-demand tables give. A TransactWriteItems or TransactGetItems is
// cancelled whole (TransactionCanceledException), its throttled actions'
// reason ThrottlingError with the same message (API Reference,
// TransactWriteItems); a BatchWriteItem or BatchGetItem returns the
// throttled requests as unprocessed, and answers the exception only when
// all of them are.
const (
	throttledType    = dynamoErrPrefix + "ProvisionedThroughputExceededException"
	throttledMessage = "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly. If exceptions persist, check if you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
)

// StatsPath answers GET with Stats: the calls the proxy has seen and the
// capacity they consumed, per operation, since it started.
const StatsPath = "/_local-aws/stats"

// Throughput keeps DynamoDB's per-partition throughput, divided by k: with
// k = 10 a partition key value serves 100 WCU and 300 RCU a second. 0, the
// default, keeps none (and counts no capacity; calls are always counted).
func Throughput(k float64) Option { return limit(func(l *limiter) { l.tp.setScale(k) }) }

// OpStats is what the proxy counted of one operation.
type OpStats struct {
	Calls     int64
	Throttled int64   `json:",omitempty"`
	WCU       float64 `json:",omitempty"`
	RCU       float64 `json:",omitempty"`
}

// Stats is what StatsPath answers. Ops is keyed by service and operation
// ("DynamoDB.PutItem", "SQS.SendMessage", "Streams.GetRecords").
type Stats struct {
	Throughput float64
	Ops        map[string]OpStats
}

// Sub is s less an earlier snapshot: what happened between the two.
func (s Stats) Sub(earlier Stats) Stats {
	out := Stats{Throughput: s.Throughput, Ops: map[string]OpStats{}}
	for op, o := range s.Ops {
		e := earlier.Ops[op]
		d := OpStats{Calls: o.Calls - e.Calls, Throttled: o.Throttled - e.Throttled, WCU: o.WCU - e.WCU, RCU: o.RCU - e.RCU}
		if d != (OpStats{}) {
			out.Ops[op] = d
		}
	}
	return out
}

// Total sums every operation's counts.
func (s Stats) Total() OpStats {
	var t OpStats
	for _, o := range s.Ops {
		t.Calls += o.Calls
		t.Throttled += o.Throttled
		t.WCU += o.WCU
		t.RCU += o.RCU
	}
	return t
}

// ReadStats asks the proxy at endpoint for its Stats.
func ReadStats(ctx context.Context, endpoint string) (Stats, error) {
	var s Stats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(endpoint, "/")+StatsPath, nil)
	if err != nil {
		return s, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, fmt.Errorf("motoserver: stats: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("motoserver: stats at %s: %s", endpoint, resp.Status)
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&s)
	return s, err
}

// throughputLimits keeps a token bucket per partition key value and
// direction, and the counts of Stats. A request is let through while its
// key's bucket holds anything, and is charged its whole cost, which may
// leave the bucket in debt: an item larger than a second's capacity (a
// 400 KB write at k = 10) still gets written, as in DynamoDB, and its key
// waits for the debt to be paid. Reads are charged once moto has answered,
// by what they read.
//
// A write is charged the larger of the item's size before and after, as
// DynamoDB charges it (writeAfter); in a transaction, the before-image is
// the size the proxy last saw of the item. Not kept: index writes, Scan's
// partitions (metered, never throttled), and adaptive capacity (isolating a
// hot item onto a partition of its own).
type throughputLimits struct {
	mu      sync.Mutex
	scale   float64
	buckets map[string]*bucket
	stats   map[string]*OpStats
	// sizes are the items' sizes as last seen (item id → bytes), for the
	// before-image of a write.
	sizes map[string]int
}

// maxSizes bounds the item sizes remembered; past it they are forgotten
// wholesale (an unknown size counts as none).
const maxSizes = 1 << 20

// sizeOf is the size the proxy last saw of item id, 0 when unknown.
func (t *throughputLimits) sizeOf(id string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sizes[id]
}

// noteSize remembers item id's size; -1 forgets it (deleted, or unknown).
func (t *throughputLimits) noteSize(id string, size int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if size < 0 {
		delete(t.sizes, id)
		return
	}
	if len(t.sizes) >= maxSizes {
		clear(t.sizes)
	}
	t.sizes[id] = size
}

// bucket is a partition key's unused capacity in one direction.
type bucket struct {
	tokens float64
	last   time.Time
}

func newThroughputLimits() throughputLimits {
	return throughputLimits{buckets: map[string]*bucket{}, stats: map[string]*OpStats{}, sizes: map[string]int{}}
}

func (t *throughputLimits) setScale(k float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if k < 0 {
		k = 0
	}
	t.scale = k
	clear(t.buckets)
	clear(t.sizes)
}

func (t *throughputLimits) on() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.scale > 0
}

func (t *throughputLimits) snapshot() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Stats{Throughput: t.scale, Ops: make(map[string]OpStats, len(t.stats))}
	for op, o := range t.stats {
		s.Ops[op] = *o
	}
	return s
}

func (t *throughputLimits) statsOf(op string) *OpStats {
	o := t.stats[op]
	if o == nil {
		o = &OpStats{}
		t.stats[op] = o
	}
	return o
}

// count notes one call of op.
func (t *throughputLimits) count(op string) {
	t.mu.Lock()
	t.statsOf(op).Calls++
	t.mu.Unlock()
}

// rate is a direction's capacity per second per key; t.mu is held.
func (t *throughputLimits) rate(write bool) float64 {
	if write {
		return partitionWCU / t.scale
	}
	return partitionRCU / t.scale
}

// refill is key's bucket as of now; t.mu is held.
func (t *throughputLimits) refill(key string, write bool, now time.Time) *bucket {
	rate := t.rate(write)
	b := t.buckets[key]
	if b == nil {
		b = &bucket{tokens: rate * burst, last: now}
		t.buckets[key] = b
		return b
	}
	if d := now.Sub(b.last).Seconds(); d > 0 {
		b.tokens = math.Min(rate*burst, b.tokens+d*rate)
		b.last = now
	}
	return b
}

// charge is a cost to one partition key's bucket.
type charge struct {
	key   string // bucketKey
	write bool
	units float64
}

// admit reports, for each charge, whether its key has capacity left, and
// when every one has (or all is false and some has), takes the admitted
// charges' units. all makes it all or nothing.
func (t *throughputLimits) admit(op string, now time.Time, charges []charge, all bool) (ok []bool, any bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ok = make([]bool, len(charges))
	every := true
	for i, c := range charges {
		ok[i] = t.refill(c.key, c.write, now).tokens > 0
		every = every && ok[i]
		any = any || ok[i]
	}
	if all && !every {
		t.statsOf(op).Throttled++
		return ok, false
	}
	if !any && len(charges) > 0 {
		t.statsOf(op).Throttled++
		return ok, false
	}
	st := t.statsOf(op)
	for i, c := range charges {
		if !ok[i] {
			continue
		}
		t.buckets[c.key].tokens -= c.units
		if c.write {
			st.WCU += c.units
		} else {
			st.RCU += c.units
		}
	}
	return ok, true
}

// settle takes read charges known once moto answered (the keys were
// admitted before).
func (t *throughputLimits) settle(op string, now time.Time, charges []charge) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.statsOf(op)
	for _, c := range charges {
		t.refill(c.key, c.write, now).tokens -= c.units
		if c.write {
			st.WCU += c.units
		} else {
			st.RCU += c.units
		}
	}
}

func bucketKey(write bool, table, partition string) string {
	d := "r"
	if write {
		d = "w"
	}
	return d + "\x00" + tableName(table) + "\x00" + partition
}

// writeUnits is what writing an item of size bytes costs: 1 WCU a KB,
// rounded up, at least 1; twice that in a transaction.
func writeUnits(size int, transactional bool) float64 {
	u := math.Max(1, math.Ceil(float64(size)/writeUnit))
	if transactional {
		u *= 2
	}
	return u
}

// readUnits is what reading size bytes costs: 1 RCU per 4 KB, rounded up,
// at least 1, strongly consistent; half that eventually consistent; twice
// it in a transaction.
func readUnits(size int, consistent, transactional bool) float64 {
	u := math.Max(1, math.Ceil(float64(size)/readUnit))
	switch {
	case transactional:
		u *= 2
	case !consistent:
		u /= 2
	}
	return u
}

// partitionOf is the partition key value of an item or key of table, as
// one string; ok is false when the table's schema is unknown.
func (l *limiter) partitionOf(r *http.Request, table string, item map[string]json.RawMessage) (string, bool) {
	attrs, ok := l.keyAttributes(r, table)
	if !ok || len(attrs) == 0 {
		return "", false
	}
	v, ok := item[attrs[0]]
	if !ok {
		return "", false
	}
	data, err := json.Marshal(v) // compacted: one spelling per value
	if err != nil {
		return "", false
	}
	return string(data), true
}

// writeThrottled answers a single request past its key's throughput.
func writeThrottled(w http.ResponseWriter, table string, write bool) {
	reason := "TableReadKeyRangeThroughputExceeded"
	if write {
		reason = "TableWriteKeyRangeThroughputExceeded"
	}
	writeJSONError(w, http.StatusBadRequest, throttledType, throttledMessage, map[string]any{
		"ThrottlingReasons": []map[string]string{{"reason": reason, "resource": tableARN(table)}},
	})
}

// tableARN is the ARN of a table named as in a request, in moto's default
// account and region.
func tableARN(table string) string {
	if strings.HasPrefix(table, "arn:") {
		return table
	}
	return "arn:aws:dynamodb:us-east-1:123456789012:table/" + table
}

// throughputBefore admits or refuses a DynamoDB data-plane request by its
// partition keys' capacity. It answers w and returns handled when it
// refuses; it may rewrite a batch's body (the throttled requests left out,
// returned as unprocessed by throughputAfter).
func (l *limiter) throughputBefore(w http.ResponseWriter, r *http.Request, op string, body []byte, x *exchange) bool {
	now := l.clock()
	name := "DynamoDB." + op
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem":
		var in transactItem
		if json.Unmarshal(body, &in) != nil || in.TableName == "" {
			return false
		}
		src := in.Key
		if op == "PutItem" {
			src = in.Item
		}
		part, ok := l.partitionOf(r, in.TableName, src)
		if !ok {
			return false
		}
		c := charge{bucketKey(true, in.TableName, part), true, writeUnits(in.size(), false)}
		if _, ok := l.tp.admit(name, now, []charge{c}, true); !ok {
			writeThrottled(w, in.TableName, true)
			return true
		}
		if id, ok := l.itemID(r, in); ok {
			l.writeAfter(r, x, op, id, in, c, body)
		}
	case "TransactWriteItems":
		var in struct{ TransactItems []map[string]transactItem }
		if json.Unmarshal(body, &in) != nil {
			return false
		}
		var charges []charge
		for _, action := range in.TransactItems {
			for kind, it := range action {
				src := it.Key
				if kind == "Put" {
					src = it.Item
				}
				part, ok := l.partitionOf(r, it.TableName, src)
				if !ok {
					return false // moto answers what it cannot run
				}
				// The item before, when the proxy saw its size: DynamoDB charges
				// the larger of the two images.
				size := it.size()
				if id, ok := l.itemID(r, it); ok {
					size = max(size, l.tp.sizeOf(id))
					if kind == "Put" {
						l.tp.noteSize(id, itemSize(it.Item))
					} else {
						l.tp.noteSize(id, -1)
					}
				}
				charges = append(charges, charge{bucketKey(true, it.TableName, part), true, writeUnits(size, true)})
			}
		}
		if ok, admitted := l.tp.admit(name, now, charges, true); !admitted {
			writeThrottledTransaction(w, ok)
			return true
		}
	case "GetItem":
		var in struct {
			TableName      string
			Key            map[string]json.RawMessage
			ConsistentRead bool
		}
		if json.Unmarshal(body, &in) != nil {
			return false
		}
		part, ok := l.partitionOf(r, in.TableName, in.Key)
		if !ok {
			return false
		}
		key := bucketKey(false, in.TableName, part)
		if _, ok := l.tp.admit(name, now, []charge{{key, false, 0}}, true); !ok {
			writeThrottled(w, in.TableName, false)
			return true
		}
		l.readAfter(r, x, func(answer []byte) []charge {
			var out struct{ Item map[string]json.RawMessage }
			_ = json.Unmarshal(answer, &out)
			return []charge{{key, false, readUnits(itemSize(out.Item), in.ConsistentRead, false)}}
		})
	case "Query", "Scan":
		var in struct {
			TableName, IndexName, KeyConditionExpression string
			ExpressionAttributeNames                     map[string]string
			ExpressionAttributeValues                    map[string]json.RawMessage
			ConsistentRead                               bool
		}
		if json.Unmarshal(body, &in) != nil || in.TableName == "" {
			return false
		}
		// A Query reads one partition key value; a Scan reads them all and is
		// only metered (charged to the table as a whole, never refused).
		key := bucketKey(false, in.TableName, "\x00scan")
		if op == "Query" {
			part, ok := l.queryPartition(r, in.TableName, in.IndexName, in.KeyConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
			if !ok {
				return false
			}
			key = bucketKey(false, in.TableName, in.IndexName+"\x00"+part)
			if _, ok := l.tp.admit(name, now, []charge{{key, false, 0}}, true); !ok {
				writeThrottled(w, in.TableName, false)
				return true
			}
		}
		l.readAfter(r, x, func(answer []byte) []charge {
			var out struct{ Items []map[string]json.RawMessage }
			_ = json.Unmarshal(answer, &out)
			size := 0
			for _, it := range out.Items {
				size += itemSize(it)
			}
			return []charge{{key, false, readUnits(size, in.ConsistentRead, false)}}
		})
	case "TransactGetItems":
		var in struct{ TransactItems []map[string]transactItem }
		if json.Unmarshal(body, &in) != nil {
			return false
		}
		charges := make([]charge, len(in.TransactItems))
		for i, action := range in.TransactItems {
			it := action["Get"]
			part, ok := l.partitionOf(r, it.TableName, it.Key)
			if !ok {
				return false
			}
			charges[i] = charge{bucketKey(false, it.TableName, part), false, 0}
		}
		if ok, admitted := l.tp.admit(name, now, charges, true); !admitted {
			writeThrottledTransaction(w, ok)
			return true
		}
		l.readAfter(r, x, func(answer []byte) []charge {
			var out struct {
				Responses []struct{ Item map[string]json.RawMessage }
			}
			_ = json.Unmarshal(answer, &out)
			for i := range charges {
				size := 0
				if i < len(out.Responses) {
					size = itemSize(out.Responses[i].Item)
				}
				charges[i].units = readUnits(size, true, true)
			}
			return charges
		})
	case "BatchWriteItem":
		return l.batchWrite(w, r, name, now, body, x)
	case "BatchGetItem":
		return l.batchGet(w, r, name, now, body, x)
	}
	return false
}

// writeAfter has throughputAfter charge a single write what DynamoDB
// charges: the larger of the item's size before and after, which moto's
// answer tells when it returns the item. Unless the caller asked for
// values itself, the proxy asks for them (ALL_OLD for a Put or a Delete,
// ALL_NEW for an Update) and takes them out of the answer; the other image
// is the size the proxy last saw of the item (a Put's new item is the
// request's). c was charged on the request's size; the difference is
// charged once moto answered.
func (l *limiter) writeAfter(r *http.Request, x *exchange, op, id string, in transactItem, c charge, body []byte) {
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil {
		return
	}
	var asked string
	_ = json.Unmarshal(req["ReturnValues"], &asked)
	added := false
	if asked == "" || asked == "NONE" {
		asked, added = "ALL_OLD", true
		if op == "UpdateItem" {
			asked = "ALL_NEW"
		}
		req["ReturnValues"], _ = json.Marshal(asked)
		rewritten, err := json.Marshal(req)
		if err != nil {
			return
		}
		setBody(r, rewritten)
	}
	r.Header.Del("Accept-Encoding") // the answer is read
	x.writeFix = func(answer []byte) []byte {
		var out map[string]json.RawMessage
		if json.Unmarshal(answer, &out) != nil {
			return answer
		}
		var attrs map[string]json.RawMessage
		_ = json.Unmarshal(out["Attributes"], &attrs)
		before, after := l.tp.sizeOf(id), in.size()
		switch asked {
		case "ALL_OLD":
			before = itemSize(attrs)
		case "ALL_NEW":
			after = itemSize(attrs)
		}
		switch op {
		case "PutItem":
			after = itemSize(in.Item)
			l.tp.noteSize(id, after)
		case "DeleteItem":
			after = 0
			l.tp.noteSize(id, -1)
		default:
			if asked == "ALL_NEW" {
				l.tp.noteSize(id, after)
			} else {
				l.tp.noteSize(id, -1)
			}
		}
		if d := writeUnits(max(before, after), false) - c.units; d != 0 {
			l.tp.settle("DynamoDB."+op, l.clock(), []charge{{c.key, true, d}})
		}
		if added {
			delete(out, "Attributes")
			if data, err := json.Marshal(out); err == nil {
				return data
			}
		}
		return answer
	}
}

// readAfter has throughputAfter charge what moto's answer to r read.
func (l *limiter) readAfter(r *http.Request, x *exchange, charges func([]byte) []charge) {
	r.Header.Del("Accept-Encoding") // the answer is read
	x.readCharges = charges
}

// keyEquality finds `name = :value` in a key condition expression.
var keyEquality = regexp.MustCompile(`(#?[A-Za-z0-9_.\-]+)\s*=\s*(:[A-Za-z0-9_]+)`)

// queryPartition is the partition key value a Query reads: the value its
// key condition compares the table's or index's partition key with.
func (l *limiter) queryPartition(r *http.Request, table, index, cond string, names map[string]string, values map[string]json.RawMessage) (string, bool) {
	hash, ok := l.hashKeyOf(r, table, index)
	if !ok {
		return "", false
	}
	for _, m := range keyEquality.FindAllStringSubmatch(cond, -1) {
		attr := m[1]
		if n, ok := names[attr]; ok {
			attr = n
		}
		if attr != hash {
			continue
		}
		v, ok := values[m[2]]
		if !ok {
			return "", false
		}
		data, err := json.Marshal(v)
		return string(data), err == nil
	}
	return "", false
}

// hashKeyOf is the partition key attribute of table, or of its index.
func (l *limiter) hashKeyOf(r *http.Request, table, index string) (string, bool) {
	if index == "" {
		attrs, ok := l.keyAttributes(r, table)
		if !ok || len(attrs) == 0 {
			return "", false
		}
		return attrs[0], true
	}
	id := tableName(table) + "\x00" + index
	l.dynamo.mu.Lock()
	hash, ok := l.dynamo.indexHash[id]
	l.dynamo.mu.Unlock()
	if ok {
		return hash, true
	}
	type keySchema []struct{ AttributeName, KeyType string }
	var out struct {
		Table struct {
			GlobalSecondaryIndexes, LocalSecondaryIndexes []struct {
				IndexName string
				KeySchema keySchema
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
	defer cancel()
	if err := l.callMoto(ctx, r.Header.Get("Authorization"), dynamoPrefix+"DescribeTable", map[string]string{"TableName": table}, &out); err != nil {
		return "", false
	}
	l.dynamo.mu.Lock()
	defer l.dynamo.mu.Unlock()
	for _, ix := range append(out.Table.GlobalSecondaryIndexes, out.Table.LocalSecondaryIndexes...) {
		for _, k := range ix.KeySchema {
			if k.KeyType == "HASH" {
				l.dynamo.indexHash[tableName(table)+"\x00"+ix.IndexName] = k.AttributeName
			}
		}
	}
	hash, ok = l.dynamo.indexHash[id]
	return hash, ok
}

// batchWrite admits each request of a BatchWriteItem by its key's capacity;
// the throttled ones are left out of what moto runs and returned as
// UnprocessedItems.
func (l *limiter) batchWrite(w http.ResponseWriter, r *http.Request, name string, now time.Time, body []byte, x *exchange) bool {
	var in map[string]json.RawMessage
	var items map[string][]map[string]struct {
		Item map[string]json.RawMessage
		Key  map[string]json.RawMessage
	}
	var raw map[string][]json.RawMessage
	if json.Unmarshal(body, &in) != nil || json.Unmarshal(in["RequestItems"], &items) != nil || json.Unmarshal(in["RequestItems"], &raw) != nil {
		return false
	}
	type ref struct {
		table string
		i     int
	}
	var charges []charge
	var refs []ref
	for _, table := range sortedKeys(items) {
		for i, req := range items[table] {
			for kind, it := range req {
				src, size := it.Key, itemSize(it.Key)
				if kind == "PutRequest" {
					src, size = it.Item, itemSize(it.Item)
				}
				part, ok := l.partitionOf(r, table, src)
				if !ok {
					return false
				}
				charges = append(charges, charge{bucketKey(true, table, part), true, writeUnits(size, false)})
				refs = append(refs, ref{table, i})
			}
		}
	}
	ok, admitted := l.tp.admit(name, now, charges, false)
	if !admitted {
		writeThrottled(w, sortedKeys(items)[0], true)
		return true
	}
	kept, unprocessed := map[string][]json.RawMessage{}, map[string][]json.RawMessage{}
	for i, rf := range refs {
		if ok[i] {
			kept[rf.table] = append(kept[rf.table], raw[rf.table][rf.i])
		} else {
			unprocessed[rf.table] = append(unprocessed[rf.table], raw[rf.table][rf.i])
		}
	}
	if len(unprocessed) == 0 {
		return false
	}
	in["RequestItems"], _ = json.Marshal(kept)
	rewritten, _ := json.Marshal(in)
	setBody(r, rewritten)
	r.Header.Del("Accept-Encoding")
	x.unprocessed = "UnprocessedItems"
	x.unprocessedValue = unprocessed
	return false
}

// batchGet admits each key of a BatchGetItem by its partition's capacity;
// the throttled ones are left out of what moto reads and returned as
// UnprocessedKeys. What is read is charged once moto answered.
func (l *limiter) batchGet(w http.ResponseWriter, r *http.Request, name string, now time.Time, body []byte, x *exchange) bool {
	var in map[string]json.RawMessage
	var tables map[string]map[string]json.RawMessage
	if json.Unmarshal(body, &in) != nil || json.Unmarshal(in["RequestItems"], &tables) != nil {
		return false
	}
	type ref struct {
		table string
		key   json.RawMessage
	}
	var charges []charge
	var refs []ref
	consistent := map[string]bool{}
	for _, table := range sortedKeys(tables) {
		var keys []json.RawMessage
		var c bool
		_ = json.Unmarshal(tables[table]["Keys"], &keys)
		_ = json.Unmarshal(tables[table]["ConsistentRead"], &c)
		consistent[table] = c
		for _, k := range keys {
			var key map[string]json.RawMessage
			if json.Unmarshal(k, &key) != nil {
				return false
			}
			part, ok := l.partitionOf(r, table, key)
			if !ok {
				return false
			}
			charges = append(charges, charge{bucketKey(false, table, part), false, 0})
			refs = append(refs, ref{table, k})
		}
	}
	ok, admitted := l.tp.admit(name, now, charges, false)
	if !admitted {
		writeThrottled(w, sortedKeys(tables)[0], false)
		return true
	}
	kept, unprocessed := map[string][]json.RawMessage{}, map[string][]json.RawMessage{}
	var admittedCharges []charge
	for i, rf := range refs {
		if ok[i] {
			kept[rf.table] = append(kept[rf.table], rf.key)
			admittedCharges = append(admittedCharges, charges[i])
		} else {
			unprocessed[rf.table] = append(unprocessed[rf.table], rf.key)
		}
	}
	if len(unprocessed) > 0 {
		withKeys := func(keys map[string][]json.RawMessage) map[string]map[string]json.RawMessage {
			out := map[string]map[string]json.RawMessage{}
			for table, ks := range keys {
				spec := map[string]json.RawMessage{}
				for k, v := range tables[table] {
					spec[k] = v
				}
				spec["Keys"], _ = json.Marshal(ks)
				out[table] = spec
			}
			return out
		}
		in["RequestItems"], _ = json.Marshal(withKeys(kept))
		rewritten, _ := json.Marshal(in)
		setBody(r, rewritten)
		x.unprocessed = "UnprocessedKeys"
		x.unprocessedValue = withKeys(unprocessed)
	}
	l.readAfter(r, x, func(answer []byte) []charge {
		var out struct {
			Responses map[string][]map[string]json.RawMessage
		}
		_ = json.Unmarshal(answer, &out)
		// Each item read is charged to its partition key; a key read and not
		// found costs the minimum, as in DynamoDB. (An item whose projection
		// leaves its partition key out is charged the minimum.)
		size := map[string]int{}
		for table, items := range out.Responses {
			for _, it := range items {
				if part, ok := l.partitionOf(r, table, it); ok {
					size[bucketKey(false, table, part)] += itemSize(it)
				}
			}
		}
		result := make([]charge, 0, len(admittedCharges))
		seen := map[string]bool{}
		for _, c := range admittedCharges {
			table := strings.SplitN(c.key, "\x00", 3)[1]
			c.units = readUnits(0, consistent[table], false)
			if !seen[c.key] {
				seen[c.key] = true
				c.units = readUnits(size[c.key], consistent[table], false)
			}
			result = append(result, c)
		}
		return result
	})
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// throughputAfter charges a read by what moto's answer holds, and adds the
// batch requests the proxy left out to the answer as unprocessed.
func (l *limiter) throughputAfter(resp *http.Response, op string, x *exchange) error {
	if (x.readCharges == nil && x.writeFix == nil && x.unprocessed == "") || resp.StatusCode != http.StatusOK {
		return nil
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if x.readCharges != nil {
		l.tp.settle("DynamoDB."+op, l.clock(), x.readCharges(data))
	}
	if x.writeFix != nil {
		data = x.writeFix(data)
	}
	if x.unprocessed != "" {
		var out map[string]json.RawMessage
		if json.Unmarshal(data, &out) == nil {
			merged := map[string]json.RawMessage{}
			_ = json.Unmarshal(out[x.unprocessed], &merged)
			extra, _ := json.Marshal(x.unprocessedValue)
			var add map[string]json.RawMessage
			_ = json.Unmarshal(extra, &add)
			for table, v := range add {
				if old, ok := merged[table]; ok && x.unprocessed == "UnprocessedItems" {
					var a, b []json.RawMessage
					_ = json.Unmarshal(old, &a)
					_ = json.Unmarshal(v, &b)
					v, _ = json.Marshal(append(a, b...))
				}
				merged[table] = v
			}
			out[x.unprocessed], _ = json.Marshal(merged)
			data, _ = json.Marshal(out)
		}
	}
	setResponseBody(resp, data)
	return nil
}

// writeThrottledTransaction answers a transaction cancelled for throughput: reason
// ThrottlingError for each item whose partition had no capacity left (ok
// false), None for the others, as DynamoDB does.
func writeThrottledTransaction(w http.ResponseWriter, ok []bool) {
	reasons := make([]map[string]string, len(ok))
	for i := range ok {
		reasons[i] = map[string]string{"Code": "None"}
		if !ok[i] {
			reasons[i] = map[string]string{"Code": "ThrottlingError", "Message": throttledMessage}
		}
	}
	writeCancelled(w, reasons)
}
