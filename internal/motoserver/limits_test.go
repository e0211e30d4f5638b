package motoserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// shared is one proxied moto_server for the limit tests, started by the
// first that needs it and stopped by TestMain.
var shared struct {
	once sync.Once
	srv  *Server
	err  error
	seq  int
	mu   sync.Mutex
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	os.Exit(code)
}

func server(t *testing.T) *Server {
	t.Helper()
	shared.once.Do(func() { shared.srv, shared.err = Start(context.Background(), 0) })
	if shared.err != nil {
		t.Fatalf("start moto_server: %v", shared.err)
	}
	return shared.srv
}

// uniqueName is a table or queue name of its own for the calling test.
func uniqueName(prefix string) string {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.seq++
	return fmt.Sprintf("%s-%d", prefix, shared.seq)
}

func limitsOf(s *Server) *limiter { return s.proxy.Handler.(*isolator).limits }

// config is an SDK configuration that signs as accessKey and talks to url.
func config(url, accessKey string) aws.Config {
	return aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider(accessKey, "secret", ""),
		BaseEndpoint: aws.String(url), RetryMaxAttempts: 1}
}

func createTable(t *testing.T, db *dynamodb.Client, stream bool) string {
	t.Helper()
	name := uniqueName("limits")
	in := &dynamodb.CreateTableInput{
		TableName: &name, BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	}
	if stream {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
	}
	if _, err := db.CreateTable(context.Background(), in); err != nil {
		t.Fatalf("create table: %v", err)
	}
	return name
}

func key(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}}
}

func put(table, pk string) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{TableName: &table, Item: key(pk)}}
}

func update(table, pk string) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{TableName: &table, Key: key(pk),
		UpdateExpression:          aws.String("ADD n :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}}}}
}

// errorCode is the AWS error code of err, or "" when it is none.
func errorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// waitHeld waits until n items are held by transactions in flight.
func waitHeld(t *testing.T, l *limiter, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.dynamo.mu.Lock()
		got := len(l.dynamo.held)
		l.dynamo.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d items held by transactions in flight, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOverlappingTransactionsConflict holds one transaction in flight (the
// table's TransactionHold) and sends, meanwhile, what DynamoDB refuses:
// another transaction on one of its items, a single-item write of one, a
// transactional read of one; and what it accepts: a transaction on other
// items. Once the first is done, the same requests pass.
func TestOverlappingTransactionsConflict(t *testing.T) {
	ctx := context.Background()
	srv := server(t)
	db := dynamodb.NewFromConfig(config(srv.URL, "local"))
	table := createTable(t, db, false)
	if err := SetLimits(ctx, srv.URL, Override{Table: table, TransactionHold: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() {
		_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			put(table, "a"), update(table, "b")}, ClientRequestToken: aws.String("first-token")})
		first <- err
	}()
	waitHeld(t, limitsOf(srv), 2)

	_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		put(table, "c"), update(table, "b")}})
	var cancelled *types.TransactionCanceledException
	if !errors.As(err, &cancelled) {
		t.Fatalf("overlapping transaction: got %v, want TransactionCanceledException", err)
	}
	if n := len(cancelled.CancellationReasons); n != 2 {
		t.Fatalf("got %d cancellation reasons, want 2", n)
	}
	if got0, got1 := aws.ToString(cancelled.CancellationReasons[0].Code), aws.ToString(cancelled.CancellationReasons[1].Code); got0 != "None" || got1 != "TransactionConflict" {
		t.Fatalf("cancellation reasons: got [%s %s], want [None TransactionConflict]", got0, got1)
	}
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: key("a")})
	var conflict *types.TransactionConflictException
	if !errors.As(err, &conflict) {
		t.Fatalf("PutItem of an item in a transaction: got %v, want TransactionConflictException", err)
	}
	_, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: key("b")})
	if !errors.As(err, &conflict) {
		t.Fatalf("DeleteItem of an item in a transaction: got %v, want TransactionConflictException", err)
	}
	_, err = db.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
		{Get: &types.Get{TableName: &table, Key: key("a")}}}})
	if !errors.As(err, &cancelled) || aws.ToString(cancelled.CancellationReasons[0].Code) != "TransactionConflict" {
		t.Fatalf("TransactGetItems of an item in a transaction: got %v, want it cancelled with TransactionConflict", err)
	}
	// The same transaction again (an SDK retry keeps its token) is in progress.
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		put(table, "a"), update(table, "b")}, ClientRequestToken: aws.String("first-token")})
	if code := errorCode(err); code != "TransactionInProgressException" {
		t.Fatalf("the same transaction retried while in flight: got %v, want TransactionInProgressException", err)
	}
	// Other items are free; this one is held too, so it waits its turn.
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put(table, "d")}}); err != nil {
		t.Fatalf("a transaction on other items: %v", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("the first transaction: %v", err)
	}
	if err := SetLimits(ctx, srv.URL, Override{Table: table}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		put(table, "c"), update(table, "b")}}); err != nil {
		t.Fatalf("the second transaction once the first is done: %v", err)
	}
	got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key("b")})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := got.Item["n"].(*types.AttributeValueMemberN); !ok || n.Value != "2" {
		t.Fatalf("item b after two transactions: %v, want n = 2", got.Item)
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: key("a")}); err != nil {
		t.Fatalf("PutItem once the transaction is done: %v", err)
	}
}

// TestTransactionSizeLimits checks each of a transaction's limits at its
// edge and one past it.
func TestTransactionSizeLimits(t *testing.T) {
	ctx := context.Background()
	srv := server(t)
	db := dynamodb.NewFromConfig(config(srv.URL, "local"))
	table := createTable(t, db, false)
	items := func(n int, prefix string) []types.TransactWriteItem {
		out := make([]types.TransactWriteItem, n)
		for i := range out {
			out[i] = put(table, fmt.Sprintf("%s%d", prefix, i))
		}
		return out
	}
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items(100, "w")}); err != nil {
		t.Fatalf("100 items: %v", err)
	}
	_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items(101, "x")})
	if code := errorCode(err); code != "ValidationException" || !strings.Contains(err.Error(), "less than or equal to 100") {
		t.Fatalf("101 items: got %v, want ValidationException (at most 100)", err)
	}
	gets := func(n int) []types.TransactGetItem {
		out := make([]types.TransactGetItem, n)
		for i := range out {
			out[i] = types.TransactGetItem{Get: &types.Get{TableName: &table, Key: key(fmt.Sprintf("w%d", i%100))}}
		}
		return out
	}
	if got, err := db.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: gets(100)}); err != nil || len(got.Responses) != 100 {
		t.Fatalf("TransactGetItems of 100 items: %v", err)
	}
	if _, err := db.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: gets(101)}); errorCode(err) != "ValidationException" {
		t.Fatalf("TransactGetItems of 101 items: got %v, want ValidationException", err)
	}
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put(table, "dup"), update(table, "dup")}})
	if errorCode(err) != "ValidationException" || !strings.Contains(err.Error(), "Transaction request cannot include multiple operations on one item") {
		t.Fatalf("one item twice: got %v, want ValidationException", err)
	}

	// 4 MB: eleven items whose strings are four-byte characters (a limit
	// counted in characters would let four times as much through), sized so
	// that the transaction weighs exactly 4 MB, then one byte more.
	big := func(total int) []types.TransactWriteItem {
		out := make([]types.TransactWriteItem, 11)
		left := total
		for i := range out {
			pk := fmt.Sprintf("big%02d", i)
			fixed := len("pk") + len(pk) + len("body")
			n := left/(len(out)-i) - fixed
			left -= n + fixed
			body := strings.Repeat("😀", n/4) + strings.Repeat("a", n%4)
			out[i] = types.TransactWriteItem{Put: &types.Put{TableName: &table, Item: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: pk}, "body": &types.AttributeValueMemberS{Value: body}}}}
		}
		return out
	}
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: big(4 << 20)}); err != nil {
		t.Fatalf("a transaction of exactly 4 MB: %v", err)
	}
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: big(4<<20 + 1)})
	if errorCode(err) != "ValidationException" || !strings.Contains(err.Error(), "cannot be larger than 4 MB") {
		t.Fatalf("a transaction of 4 MB and one byte: got %v, want ValidationException", err)
	}
	// The items a TransactGetItems reads count too.
	reads := make([]types.TransactGetItem, 11)
	for i := range reads {
		reads[i] = types.TransactGetItem{Get: &types.Get{TableName: &table, Key: key(fmt.Sprintf("big%02d", i))}}
	}
	if _, err := db.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: reads}); err != nil {
		t.Fatalf("reading the 4 MB back: %v", err)
	}
	if _, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &table, Key: key("big00"), UpdateExpression: aws.String("SET x = :x"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":x": &types.AttributeValueMemberS{Value: "y"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: reads}); errorCode(err) != "ValidationException" {
		t.Fatalf("reading 4 MB and 2 bytes: got %v, want ValidationException", err)
	}
}
