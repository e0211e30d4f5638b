package motoserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// DynamoDB's limits on transactions, as documented for TransactWriteItems
// and TransactGetItems. moto refuses more than 100 items and two actions on
// one item itself (sitecustomize.py); the proxy adds the rest.
const (
	maxTransactionBytes = 4 << 20
	dynamoErrPrefix     = "com.amazonaws.dynamodb.v20120810#"
	validationType      = "com.amazon.coral.validate#ValidationException"
	conflictMessage     = "Transaction is ongoing for the item"
	tooLargeMessage     = "Transaction request cannot be larger than 4 MB"
)

// dynamoLimits keeps, for DynamoDB:
//
//   - Transactions that overlap are cancelled. DynamoDB cancels a
//     TransactWriteItems that touches an item of another one in flight
//     (TransactionCanceledException, the item's reason TransactionConflict),
//     refuses a PutItem, UpdateItem or DeleteItem of such an item
//     (TransactionConflictException), and cancels a TransactGetItems that
//     reads one. moto runs one request at a time and never does: the proxy
//     registers a transaction's items when its request arrives, before it
//     waits for the isolator's lock, and releases them once moto answered;
//     a request that arrives within the first's run time as DynamoDB's
//     (heldTxn) and touches one of them is refused. The first to arrive
//     runs. TransactionHold stretches that time, so that tests overlap two
//     transactions for sure.
//     (BatchWriteItem and PartiQL are not checked.)
//   - A transaction holds at most 4 MB (ValidationException).
type dynamoLimits struct {
	mu      sync.Mutex
	held    map[string]*heldTxn // item id → the transaction in flight on it
	schemas map[string][]string // table → its key attributes
	// indexHash maps table and index name to the index's partition key.
	indexHash map[string]string
}

// heldTxn is a TransactWriteItems in flight, overlapping others until
// until: as long as DynamoDB would take to run it (its window after
// it arrives), or its hold. Waiting for the isolator's lock behind other
// tests' writes does not count: that is moto's slowness, not DynamoDB's.
type heldTxn struct {
	token string
	until time.Time
}

// DefaultTransactionWindow is about how long DynamoDB takes to run a small
// TransactWriteItems: two requests that touch one item within it overlap.
const DefaultTransactionWindow = 25 * time.Millisecond

// overlaps reports whether t is still in flight as DynamoDB would run it.
func (t *heldTxn) overlaps(now time.Time) bool { return now.Before(t.until) }

// transactItem is one action of a transaction, whatever its kind.
type transactItem struct {
	TableName string
	Key       map[string]json.RawMessage
	Item      map[string]json.RawMessage
	Values    map[string]json.RawMessage `json:"ExpressionAttributeValues"`
}

func (l *limiter) dynamoBefore(w http.ResponseWriter, r *http.Request, op string, body []byte, x *exchange) (func(), bool) {
	switch op {
	case "CreateTable", "DeleteTable":
		l.dynamo.mu.Lock()
		clear(l.dynamo.schemas)
		clear(l.dynamo.indexHash)
		l.dynamo.mu.Unlock()
		return nil, false
	}
	if l.tp.on() && l.throughputBefore(w, r, op, body, x) {
		return nil, true
	}
	switch op {
	case "TransactWriteItems":
		return l.transactWrite(w, r, body)
	case "TransactGetItems":
		return nil, l.transactGet(w, r, body, x)
	case "PutItem", "UpdateItem", "DeleteItem":
		var in transactItem
		if json.Unmarshal(body, &in) != nil {
			return nil, false // moto answers what it cannot read
		}
		id, ok := l.itemID(r, in)
		if !ok {
			return nil, false
		}
		l.dynamo.mu.Lock()
		other, busy := l.dynamo.held[id]
		busy = busy && other.overlaps(time.Now())
		l.dynamo.mu.Unlock()
		if busy {
			writeJSONError(w, http.StatusBadRequest, dynamoErrPrefix+"TransactionConflictException", conflictMessage, nil)
			return nil, true
		}
	}
	return nil, false
}

func (l *limiter) transactWrite(w http.ResponseWriter, r *http.Request, body []byte) (func(), bool) {
	var in struct {
		TransactItems      []map[string]transactItem
		ClientRequestToken string
	}
	if json.Unmarshal(body, &in) != nil || len(in.TransactItems) == 0 || len(in.TransactItems) > 100 {
		return nil, false // moto refuses these itself
	}
	ids := make([]string, len(in.TransactItems))
	var tables []string
	size := 0
	for i, action := range in.TransactItems {
		if len(action) != 1 {
			return nil, false
		}
		for _, it := range action {
			id, ok := l.itemID(r, it)
			if !ok {
				return nil, false
			}
			ids[i] = id
			tables = append(tables, tableName(it.TableName))
			size += it.size()
		}
	}
	if size > maxTransactionBytes {
		writeJSONError(w, http.StatusBadRequest, validationType, tooLargeMessage, nil)
		return nil, true
	}
	now, hold := time.Now(), l.holdOf(tables)
	txn := &heldTxn{token: in.ClientRequestToken, until: now.Add(max(l.windowOf(), hold))}
	l.dynamo.mu.Lock()
	reasons, conflict, sameToken := make([]map[string]string, len(ids)), false, false
	for i, id := range ids {
		reasons[i] = map[string]string{"Code": "None"}
		if other, ok := l.dynamo.held[id]; ok && other.overlaps(now) {
			reasons[i] = map[string]string{"Code": "TransactionConflict", "Message": conflictMessage}
			conflict = true
			sameToken = sameToken || (txn.token != "" && other.token == txn.token)
		}
	}
	if !conflict {
		for _, id := range ids {
			l.dynamo.held[id] = txn
		}
	}
	l.dynamo.mu.Unlock()
	switch {
	case sameToken:
		writeJSONError(w, http.StatusBadRequest, dynamoErrPrefix+"TransactionInProgressException",
			"The transaction with the given request token is already in progress.", nil)
		return nil, true
	case conflict:
		writeCancelled(w, reasons)
		return nil, true
	}
	if hold > 0 {
		time.Sleep(hold)
	}
	return func() {
		l.dynamo.mu.Lock()
		defer l.dynamo.mu.Unlock()
		for _, id := range ids {
			if l.dynamo.held[id] == txn {
				delete(l.dynamo.held, id)
			}
		}
	}, false
}

func (l *limiter) transactGet(w http.ResponseWriter, r *http.Request, body []byte, x *exchange) bool {
	var in struct{ TransactItems []map[string]transactItem }
	if json.Unmarshal(body, &in) != nil || len(in.TransactItems) > 100 {
		return false
	}
	reasons, conflict := make([]map[string]string, len(in.TransactItems)), false
	for i, action := range in.TransactItems {
		reasons[i] = map[string]string{"Code": "None"}
		id, ok := l.itemID(r, action["Get"])
		if !ok {
			return false
		}
		l.dynamo.mu.Lock()
		other, busy := l.dynamo.held[id]
		busy = busy && other.overlaps(time.Now())
		l.dynamo.mu.Unlock()
		if busy {
			reasons[i] = map[string]string{"Code": "TransactionConflict", "Message": conflictMessage}
			conflict = true
		}
	}
	if conflict {
		writeCancelled(w, reasons)
		return true
	}
	r.Header.Del("Accept-Encoding") // after reads the answer
	x.sizeOf = func(answer []byte) int {
		var out struct {
			Responses []struct{ Item map[string]json.RawMessage }
		}
		if json.Unmarshal(answer, &out) != nil {
			return 0
		}
		n := 0
		for _, resp := range out.Responses {
			n += itemSize(resp.Item)
		}
		return n
	}
	return false
}

// dynamoAfter refuses a TransactGetItems whose items add up to more than
// 4 MB, as DynamoDB does, once moto has read them.
func (l *limiter) dynamoAfter(resp *http.Response, op string, x *exchange) error {
	if err := l.throughputAfter(resp, op, x); err != nil {
		return err
	}
	if op != "TransactGetItems" || x.sizeOf == nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if x.sizeOf(data) > maxTransactionBytes {
		data, _ = json.Marshal(map[string]string{"__type": validationType, "message": tooLargeMessage})
		resp.StatusCode, resp.Status = http.StatusBadRequest, "400 Bad Request"
		resp.Header.Set("X-Amzn-Errortype", "ValidationException")
	}
	setResponseBody(resp, data)
	return nil
}

// writeCancelled answers a transaction cancelled with reasons, one per
// action, as DynamoDB does.
func writeCancelled(w http.ResponseWriter, reasons []map[string]string) {
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		codes[i] = r["Code"]
	}
	writeJSONError(w, http.StatusBadRequest, dynamoErrPrefix+"TransactionCanceledException",
		"Transaction cancelled, please refer cancellation reasons for specific reasons ["+strings.Join(codes, ", ")+"]",
		map[string]any{"CancellationReasons": reasons})
}

// itemID names the item an action touches: its table and its key. A Put
// names its item whole; the table's key attributes pick the key out of it.
func (l *limiter) itemID(r *http.Request, it transactItem) (string, bool) {
	if it.TableName == "" {
		return "", false
	}
	key := it.Key
	if key == nil && it.Item != nil {
		attrs, ok := l.keyAttributes(r, it.TableName)
		if !ok {
			return "", false
		}
		key = map[string]json.RawMessage{}
		for _, a := range attrs {
			key[a] = it.Item[a]
		}
	}
	if key == nil {
		return "", false
	}
	// encoding/json writes map keys sorted and raw values compacted: one
	// spelling per key.
	data, err := json.Marshal(key)
	if err != nil {
		return "", false
	}
	return tableName(it.TableName) + "\x00" + string(data), true
}

// keyAttributes are the table's key attribute names, asked of moto once.
func (l *limiter) keyAttributes(r *http.Request, table string) ([]string, bool) {
	name := tableName(table)
	l.dynamo.mu.Lock()
	attrs, ok := l.dynamo.schemas[name]
	l.dynamo.mu.Unlock()
	if ok {
		return attrs, true
	}
	var out struct {
		Table struct {
			KeySchema []struct{ AttributeName string }
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
	defer cancel()
	if err := l.callMoto(ctx, r.Header.Get("Authorization"), dynamoPrefix+"DescribeTable", map[string]string{"TableName": table}, &out); err != nil {
		return nil, false // no such table: moto answers the request itself
	}
	for _, k := range out.Table.KeySchema {
		attrs = append(attrs, k.AttributeName)
	}
	l.dynamo.mu.Lock()
	l.dynamo.schemas[name] = attrs
	l.dynamo.mu.Unlock()
	return attrs, true
}

// tableName is the name in a TableName, which may be the table's ARN.
func tableName(s string) string {
	if i := strings.LastIndex(s, ":table/"); i >= 0 {
		return s[i+len(":table/"):]
	}
	return s
}

// size is what an action counts towards the transaction's 4 MB: a Put its
// item, an Update its key and the values it writes, a Delete or a
// ConditionCheck its key.
func (it transactItem) size() int {
	if it.Item != nil {
		return itemSize(it.Item)
	}
	n := itemSize(it.Key)
	for _, v := range it.Values {
		n += valueSize(v)
	}
	return n
}

// itemSize is an item's size as DynamoDB counts it: each attribute's name
// in UTF-8 bytes plus its value's size.
func itemSize(item map[string]json.RawMessage) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

// valueSize is an attribute value's size as DynamoDB documents it: strings
// and binaries their bytes, numbers one byte per two significant digits
// plus one, booleans and nulls one byte, lists and maps three bytes plus one
// a member plus their members.
func valueSize(raw json.RawMessage) int {
	var v map[string]json.RawMessage
	if json.Unmarshal(raw, &v) != nil {
		return 0
	}
	for typ, val := range v {
		switch typ {
		case "S":
			var s string
			_ = json.Unmarshal(val, &s)
			return len(s)
		case "N":
			var s string
			_ = json.Unmarshal(val, &s)
			return numberSize(s)
		case "B":
			var s string
			_ = json.Unmarshal(val, &s)
			return base64.StdEncoding.DecodedLen(len(s)) - strings.Count(s, "=")
		case "BOOL", "NULL":
			return 1
		case "SS", "NS", "BS":
			var set []string
			_ = json.Unmarshal(val, &set)
			n := 0
			for _, s := range set {
				switch typ {
				case "SS":
					n += len(s)
				case "NS":
					n += numberSize(s)
				default:
					n += base64.StdEncoding.DecodedLen(len(s)) - strings.Count(s, "=")
				}
			}
			return n
		case "L":
			var list []json.RawMessage
			_ = json.Unmarshal(val, &list)
			n := 3
			for _, m := range list {
				n += 1 + valueSize(m)
			}
			return n
		case "M":
			var m map[string]json.RawMessage
			_ = json.Unmarshal(val, &m)
			n := 3
			for k, mv := range m {
				n += 1 + len(k) + valueSize(mv)
			}
			return n
		}
	}
	return 0
}

// numberSize counts a number's significant digits as DynamoDB does.
func numberSize(s string) int {
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, strings.SplitN(strings.ToLower(s), "e", 2)[0])
	digits = strings.Trim(digits, "0")
	if digits == "" {
		return 1
	}
	return int(math.Ceil(float64(utf8.RuneCountInString(digits))/2)) + 1
}
