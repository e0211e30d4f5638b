package motoserver

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// TestPatchedTransactionsLeaveTheTableInPlace talks to moto itself, not the
// proxy: a cancelled transaction whose first write moto has already made
// leaves no trace, and the stream iterator taken before it goes on seeing
// later writes (unpatched moto swaps a copy of the table in: the old
// iterator sees the cancelled write and nothing after it).
func TestPatchedTransactionsLeaveTheTableInPlace(t *testing.T) {
	ctx := context.Background()
	srv, err := Start(ctx, 0)
	if err != nil {
		t.Fatalf("start moto_server: %v", err)
	}
	defer srv.Stop()
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), BaseEndpoint: aws.String(srv.moto)}
	db, streams := dynamodb.NewFromConfig(cfg), dynamodbstreams.NewFromConfig(cfg)
	table := "patched"
	created, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: &table, BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		StreamSpecification:  &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage},
	})
	if err != nil {
		t.Fatal(err)
	}
	item := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}}
	}
	putItem := func(pk string) {
		t.Helper()
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item(pk)}); err != nil {
			t.Fatal(err)
		}
	}
	putItem("a")
	arn := created.TableDescription.LatestStreamArn
	desc, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn})
	if err != nil {
		t.Fatal(err)
	}
	it, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn,
		ShardId: desc.StreamDescription.Shards[0].ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &table, Item: item("phantom")}},
		{ConditionCheck: &types.ConditionCheck{TableName: &table, Key: item("a"), ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}})
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) {
		t.Fatalf("transaction: got %v, want it cancelled", err)
	}
	if got := aws.ToString(tc.CancellationReasons[1].Code); got != "ConditionalCheckFailed" {
		t.Fatalf("reason of the failed check: %q, want ConditionalCheckFailed", got)
	}
	putItem("b")
	got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: item("phantom")})
	if err != nil || got.Item != nil {
		t.Fatalf("the cancelled transaction's item: %v, %v; want none", got.Item, err)
	}
	recs, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range recs.Records {
		keys = append(keys, r.Dynamodb.Keys["pk"].(*streamtypes.AttributeValueMemberS).Value)
	}
	if len(keys) != 2 || keys[0] != "a" || keys[1] != "b" {
		t.Fatalf("stream records %v, want [a b]", keys)
	}

	// A write that fails while the transaction applies is undone too.
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &table, Item: item("c")}},
		{Update: &types.Update{TableName: &table, Key: item("b"), UpdateExpression: aws.String("SET m.x = :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: "v"}}}},
	}})
	if err == nil {
		t.Fatalf("an update of a missing map's member succeeded")
	}
	if got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: item("c")}); err != nil || got.Item != nil {
		t.Fatalf("the failed transaction's first item: %v, %v; want none", got.Item, err)
	}
	recs, err = streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: recs.NextShardIterator})
	if err != nil || len(recs.Records) != 0 {
		t.Fatalf("stream after the failed transaction: %d records, %v; want none", len(recs.Records), err)
	}
}
