package motoserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// throughputOn turns the shared proxy's per-partition throughput on at
// scale k with its clock stopped at a moment the test moves with the
// returned func; both are undone when the test ends.
func throughputOn(t *testing.T, srv *Server, k float64) (advance func(time.Duration)) {
	t.Helper()
	ctx := context.Background()
	if err := SetLimits(ctx, srv.URL, Override{Throughput: k}); err != nil {
		t.Fatal(err)
	}
	l := limitsOf(srv)
	now := time.Now()
	l.mu.Lock()
	l.now = func() time.Time { return now }
	l.mu.Unlock()
	t.Cleanup(func() {
		l.mu.Lock()
		l.now = time.Now
		l.mu.Unlock()
		if err := SetLimits(ctx, srv.URL, Override{}); err != nil {
			t.Error(err)
		}
	})
	return func(d time.Duration) {
		l.mu.Lock()
		now = now.Add(d)
		l.mu.Unlock()
	}
}

// sized is an item of partition key pk whose size as DynamoDB counts it is
// exactly size bytes.
// TestUnits checks the unit arithmetic at its edges: DynamoDB's largest
// item (400 KB, 409,600 bytes) costs 400 WCU, one byte past a unit costs
// one more, and nothing costs less than one unit.
func TestUnits(t *testing.T) {
	for _, c := range []struct {
		got, want float64
		what      string
	}{
		{writeUnits(409600, false), 400, "a 400 KB write"},
		{writeUnits(409600, true), 800, "a 400 KB transactional write"},
		{writeUnits(1025, false), 2, "a write of 1,025 bytes"},
		{writeUnits(0, false), 1, "a write of a key alone"},
		{readUnits(409600, true, false), 100, "a strongly consistent read of 400 KB"},
		{readUnits(409600, false, false), 50, "an eventually consistent read of 400 KB"},
		{readUnits(4097, true, true), 4, "a transactional read of 4 KB and a byte"},
		{readUnits(0, false, false), 0.5, "an eventually consistent read of nothing"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v units, want %v", c.what, c.got, c.want)
		}
	}
}

func sized(pk string, size int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk":   &types.AttributeValueMemberS{Value: pk},
		"body": &types.AttributeValueMemberS{Value: strings.Repeat("x", size-len("pk")-len(pk)-len("body"))},
	}
}

func stats(t *testing.T, srv *Server) Stats {
	t.Helper()
	s, err := ReadStats(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestHotPartitionKeyIsThrottled writes 1,000 items of 1 KB within one
// instant at k = 10 (100 WCU a second per key, a second's burst): to one
// partition key, exactly the burst's 100 land and the rest answer
// ProvisionedThroughputExceededException as DynamoDB does; spread over 100
// keys, every one lands. Half a second later the hot key takes 50 more.
func TestHotPartitionKeyIsThrottled(t *testing.T) {
	ctx := context.Background()
	srv := server(t)
	db := dynamodb.NewFromConfig(config(srv.URL, "local"))
	table := createTable(t, db, false)
	advance := throughputOn(t, srv, 10)

	if info, err := CheckFaithful(ctx, srv.URL); err != nil || info.Throughput != 10 {
		t.Fatalf("info: %+v, %v; want Throughput 10", info, err)
	}
	before := stats(t, srv)
	landed, throttled := 0, 0
	for range 1000 {
		_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: sized("hot", 1024)})
		var pte *types.ProvisionedThroughputExceededException
		switch {
		case err == nil:
			landed++
		case errors.As(err, &pte):
			throttled++
			if len(pte.ThrottlingReasons) != 1 || aws.ToString(pte.ThrottlingReasons[0].Reason) != "TableWriteKeyRangeThroughputExceeded" ||
				!strings.HasSuffix(aws.ToString(pte.ThrottlingReasons[0].Resource), ":table/"+table) {
				t.Fatalf("throttling reasons: %+v", pte.ThrottlingReasons)
			}
		default:
			t.Fatalf("put: %v", err)
		}
	}
	if landed != 100 || throttled != 900 {
		t.Fatalf("one partition key: %d landed, %d throttled; want 100 and 900", landed, throttled)
	}
	d := stats(t, srv).Sub(before).Ops["DynamoDB.PutItem"]
	if d.Calls != 1000 || d.Throttled != 900 || d.WCU != 100 {
		t.Fatalf("PutItem stats: %+v; want 1000 calls, 900 throttled, 100 WCU", d)
	}

	for i := range 1000 {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: sized(fmt.Sprintf("k%03d", i%100), 1024)}); err != nil {
			t.Fatalf("write %d spread over 100 keys: %v", i, err)
		}
	}

	advance(500 * time.Millisecond)
	landed = 0
	for range 100 {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: sized("hot", 1024)}); err == nil {
			landed++
		}
	}
	if landed != 50 {
		t.Fatalf("half a second later the hot key took %d writes, want 50", landed)
	}
	// Reads have their own budget: the key's writes are spent, its reads not.
	if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key("hot")}); err != nil {
		t.Fatalf("a read of the written-out key: %v", err)
	}
}

// TestCapacityUnits checks what each kind of call costs: a 400 KB item
// (400,000 bytes: moto refuses more than 405,000, less than DynamoDB's
// 409,600) 391 WCU (and its key is in debt afterwards), a
// 1 KB and one byte item 2, a transaction's items twice, a read 1 RCU per
// 4 KB strongly consistent and half that eventually consistent, twice in
// a transaction, and a Query the size it read.
func TestCapacityUnits(t *testing.T) {
	ctx := context.Background()
	srv := server(t)
	db := dynamodb.NewFromConfig(config(srv.URL, "local"))
	table := createTable(t, db, false)
	throughputOn(t, srv, 10)

	cost := func(op string, call func() error) OpStats {
		t.Helper()
		before := stats(t, srv)
		if err := call(); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		return stats(t, srv).Sub(before).Ops["DynamoDB."+op]
	}
	if got := cost("PutItem", func() error {
		_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: sized("big", 400_000)})
		return err
	}); got.WCU != 391 {
		t.Fatalf("a 400,000-byte item cost %v WCU, want 391 (1 per 1,024 bytes, rounded up)", got.WCU)
	}
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: sized("big", 1024)})
	var pte *types.ProvisionedThroughputExceededException
	if !errors.As(err, &pte) {
		t.Fatalf("a write to the key in debt: got %v, want ProvisionedThroughputExceededException", err)
	}
	if got := cost("PutItem", func() error {
		_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: sized("small", 1025)})
		return err
	}); got.WCU != 2 {
		t.Fatalf("a 1 KB and one byte item cost %v WCU, want 2", got.WCU)
	}
	if got := cost("TransactWriteItems", func() error {
		_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: &table, Item: sized("t1", 1024)}}, {Put: &types.Put{TableName: &table, Item: sized("t2", 2048)}}}})
		return err
	}); got.WCU != 6 {
		t.Fatalf("a transaction of a 1 KB and a 2 KB item cost %v WCU, want 2×(1+2) = 6", got.WCU)
	}
	// Reads of the 400,000-byte item (98 units of 4 KB, rounded up). Reads
	// have their own budget, 300 RCU at k = 10.
	if got := cost("GetItem", func() error {
		_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key("big")})
		return err
	}); got.RCU != 49 {
		t.Fatalf("an eventually consistent read of 400,000 bytes cost %v RCU, want 49", got.RCU)
	}
	if got := cost("GetItem", func() error {
		_, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key("big"), ConsistentRead: aws.Bool(true)})
		return err
	}); got.RCU != 98 {
		t.Fatalf("a strongly consistent read of 400,000 bytes cost %v RCU, want 98", got.RCU)
	}
	if got := cost("Query", func() error {
		_, err := db.Query(ctx, &dynamodb.QueryInput{TableName: &table, KeyConditionExpression: aws.String("#p = :p"),
			ExpressionAttributeNames:  map[string]string{"#p": "pk"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "t2"}}})
		return err
	}); got.RCU != 0.5 {
		t.Fatalf("an eventually consistent Query of 2 KB cost %v RCU, want 0.5", got.RCU)
	}
	if got := cost("TransactGetItems", func() error {
		_, err := db.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
			{Get: &types.Get{TableName: &table, Key: key("t1")}}, {Get: &types.Get{TableName: &table, Key: key("t2")}}}})
		return err
	}); got.RCU != 4 {
		t.Fatalf("a transactional read of two small items cost %v RCU, want 2×2 = 4", got.RCU)
	}
	// The key has 300 - 49 - 98 = 153 RCU left: a strongly consistent read
	// leaves 55, the next is let through into debt (-43), the third refused.
	for range 2 {
		if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key("big"), ConsistentRead: aws.Bool(true)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key("big"), ConsistentRead: aws.Bool(true)})
	if !errors.As(err, &pte) || aws.ToString(pte.ThrottlingReasons[0].Reason) != "TableReadKeyRangeThroughputExceeded" {
		t.Fatalf("a read of a key whose reads are spent: got %v, want ProvisionedThroughputExceededException (read)", err)
	}
}

// TestThrottledTransactionIsRefusedWhole spends a key's writes, then sends
// a transaction that writes it and another key: the whole transaction is
// cancelled (the throttled action's reason ThrottlingError) and the other
// key is not written. A batch with both keys writes the cold one and
// returns the hot one unprocessed; a batch of the hot one alone is refused.
func TestThrottledTransactionIsRefusedWhole(t *testing.T) {
	ctx := context.Background()
	srv := server(t)
	db := dynamodb.NewFromConfig(config(srv.URL, "local"))
	table := createTable(t, db, false)
	throughputOn(t, srv, 10)
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: sized("hot", 100*1024)}); err != nil {
		t.Fatal(err)
	}
	_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		put(table, "cold"), put(table, "hot")}})
	var cancelled *types.TransactionCanceledException
	if !errors.As(err, &cancelled) || len(cancelled.CancellationReasons) != 2 ||
		aws.ToString(cancelled.CancellationReasons[0].Code) != "None" || aws.ToString(cancelled.CancellationReasons[1].Code) != "ThrottlingError" {
		t.Fatalf("a transaction writing a spent key: got %v, want it cancelled [None ThrottlingError]", err)
	}
	got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key("cold")})
	if err != nil || got.Item != nil {
		t.Fatalf("the cancelled transaction's other item: %v, %v; want none", got.Item, err)
	}

	out, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: {
		{PutRequest: &types.PutRequest{Item: key("cold")}}, {PutRequest: &types.PutRequest{Item: key("hot")}}}}})
	if err != nil {
		t.Fatalf("a batch with a cold and a hot key: %v", err)
	}
	left := out.UnprocessedItems[table]
	if len(left) != 1 || left[0].PutRequest == nil || left[0].PutRequest.Item["pk"].(*types.AttributeValueMemberS).Value != "hot" {
		t.Fatalf("unprocessed: %+v, want the hot key's put", out.UnprocessedItems)
	}
	if got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key("cold")}); err != nil || got.Item == nil {
		t.Fatalf("the batch's cold item: %v, %v; want it written", got.Item, err)
	}
	_, err = db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: {
		{PutRequest: &types.PutRequest{Item: key("hot")}}}}})
	var pte *types.ProvisionedThroughputExceededException
	if !errors.As(err, &pte) {
		t.Fatalf("a batch of the hot key alone: got %v, want ProvisionedThroughputExceededException", err)
	}
}

// TestThroughputOffByDefault: without the option, 200 writes of 1 KB to
// one key all land and no capacity is counted, only calls.
func TestThroughputOffByDefault(t *testing.T) {
	ctx := context.Background()
	srv := server(t)
	db := dynamodb.NewFromConfig(config(srv.URL, "local"))
	table := createTable(t, db, false)
	before := stats(t, srv)
	for range 200 {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: sized("hot", 1024)}); err != nil {
			t.Fatal(err)
		}
	}
	d := stats(t, srv).Sub(before)
	if d.Throughput != 0 || d.Ops["DynamoDB.PutItem"] != (OpStats{Calls: 200}) {
		t.Fatalf("stats without throughput: %+v; want 200 PutItem calls and no units", d)
	}
	if err := SetLimits(ctx, srv.URL, Override{Throughput: -1}); err == nil {
		t.Fatal("a negative scale factor was accepted")
	}
}

// TestWriteCostsTheLargerImage: DynamoDB charges a write the larger of the
// item before and after it. A small update of a 9,000-byte item costs 9
// WCU, not the 1 its request weighs; a small Put over it 9; deleting it 9;
// a transaction's update of it twice 9. The caller gets the answer it asked
// for: no Attributes the proxy asked moto for, the ones it asked for itself.
func TestWriteCostsTheLargerImage(t *testing.T) {
	ctx := context.Background()
	srv := server(t)
	db := dynamodb.NewFromConfig(config(srv.URL, "local"))
	table := createTable(t, db, false)
	throughputOn(t, srv, 1)
	wcu := func(op string, call func() error) float64 {
		t.Helper()
		before := stats(t, srv)
		if err := call(); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		return stats(t, srv).Sub(before).Ops["DynamoDB."+op].WCU
	}
	putBig := func() {
		t.Helper()
		if got := wcu("PutItem", func() error {
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: sized("big", 9000)})
			return err
		}); got != 9 {
			t.Fatalf("a 9,000-byte put cost %v WCU, want 9", got)
		}
	}
	putBig()
	var out *dynamodb.UpdateItemOutput
	if got := wcu("UpdateItem", func() (err error) {
		out, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &table, Key: key("big"), UpdateExpression: aws.String("SET n = :n"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: "1"}}})
		return err
	}); got != 9 || out.Attributes != nil {
		t.Fatalf("a small update of a 9,000-byte item cost %v WCU (attributes %v), want 9 and none", got, out.Attributes)
	}
	if got := wcu("UpdateItem", func() (err error) {
		out, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &table, Key: key("big"), UpdateExpression: aws.String("SET n = :n"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: "2"}}, ReturnValues: types.ReturnValueUpdatedNew})
		return err
	}); got != 9 || len(out.Attributes) != 1 {
		t.Fatalf("the same with UPDATED_NEW cost %v WCU (attributes %v), want 9 and n alone", got, out.Attributes)
	}
	var put *dynamodb.PutItemOutput
	if got := wcu("PutItem", func() (err error) {
		put, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: key("big")})
		return err
	}); got != 9 || put.Attributes != nil {
		t.Fatalf("a small put over a 9,000-byte item cost %v WCU (attributes %v), want 9 and none", got, put.Attributes)
	}
	putBig()
	if got := wcu("TransactWriteItems", func() error {
		_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{update(table, "big")}})
		return err
	}); got != 18 {
		t.Fatalf("a transaction's small update of a 9,000-byte item cost %v WCU, want 2 × 9", got)
	}
	putBig()
	var del *dynamodb.DeleteItemOutput
	if got := wcu("DeleteItem", func() (err error) {
		del, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: key("big")})
		return err
	}); got != 9 || del.Attributes != nil {
		t.Fatalf("deleting a 9,000-byte item cost %v WCU (attributes %v), want 9 and none", got, del.Attributes)
	}
	if got := wcu("DeleteItem", func() error {
		_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: key("big")})
		return err
	}); got != 1 {
		t.Fatalf("deleting nothing cost %v WCU, want 1", got)
	}
}
