package motoserver

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/iampolicy"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/samtemplate"
)

// TestIAMCheck runs calls signed as template.yaml's functions through the
// proxy with the check on: what a function's policy allows reaches moto,
// what it does not answers AccessDeniedException (HTTP 400) and changes
// nothing, and an administrator's calls are not checked.
func TestIAMCheck(t *testing.T) {
	ctx := context.Background()
	tmpl, err := samtemplate.Parse(chatbundle.Template)
	if err != nil {
		t.Fatal(err)
	}
	set, err := iampolicy.FromTemplate(tmpl, iampolicy.DefaultLocal)
	if err != nil {
		t.Fatal(err)
	}
	check := NewIAM(set)
	srv, err := Start(ctx, 0, WithIAM(check))
	if err != nil {
		t.Fatalf("start moto_server: %v", err)
	}
	defer srv.Stop()
	as := func(akid string) aws.Config {
		return aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider(akid, "local", ""), BaseEndpoint: aws.String(srv.URL)}
	}
	admin := as("local")
	res, err := localrun.Ensure(ctx, dynamodb.NewFromConfig(admin), sqs.NewFromConfig(admin), localrun.S3Client(admin), tmpl, "iamtest", "iamtest-")
	if err != nil {
		t.Fatalf("create table and queues as an administrator: %v", err)
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	key := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": s(pk), "sk": s("x")}
	}
	table := aws.String(res.Table)
	denied := func(t *testing.T, what string, err error) {
		t.Helper()
		var api smithy.APIError
		var re *awshttp.ResponseError
		// SQS's SDK reads the query protocol's code, AccessDenied, from
		// the X-Amzn-Query-Error header.
		if !errors.As(err, &api) || api.ErrorCode() != "AccessDeniedException" && api.ErrorCode() != "AccessDenied" ||
			!errors.As(err, &re) || re.HTTPStatusCode() != http.StatusBadRequest {
			t.Fatalf("%s: got %v, want AccessDeniedException with HTTP 400", what, err)
		}
	}
	allowed := func(t *testing.T, what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: got %v, want it allowed", what, err)
		}
	}

	relay := dynamodb.NewFromConfig(as("OutboxRelayFunction"))
	_, err = relay.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key("WS#1")})
	allowed(t, "relay GetItem WS#", err)
	_, err = relay.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key("APITOKEN#1")})
	denied(t, "relay GetItem APITOKEN#", err)
	_, err = relay.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: key("EVENT#1")})
	denied(t, "relay PutItem (it may only BatchWriteItem)", err)
	_, err = relay.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{res.Table: {
		{PutRequest: &types.PutRequest{Item: key("EVENT#1")}}, {PutRequest: &types.PutRequest{Item: key("EVENT#2")}}}}})
	allowed(t, "relay BatchWriteItem EVENT#", err)
	_, err = relay.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{res.Table: {
		{PutRequest: &types.PutRequest{Item: key("EVENT#3")}}, {PutRequest: &types.PutRequest{Item: key("WS#3")}}}}})
	denied(t, "relay BatchWriteItem with one WS# item", err)
	_, err = relay.Query(ctx, &dynamodb.QueryInput{TableName: table, KeyConditionExpression: aws.String("#p = :p"),
		ExpressionAttributeNames: map[string]string{"#p": "pk"}, ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("ROOM#1")}})
	allowed(t, "relay Query ROOM#", err)
	_, err = relay.Query(ctx, &dynamodb.QueryInput{TableName: table, KeyConditionExpression: aws.String(":p = pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("GSESSION#1")}})
	denied(t, "relay Query GSESSION#", err)

	// A transaction is checked item by item, each with its own action.
	join := dynamodb.NewFromConfig(as("JoinRoomFunction"))
	tx := func(items ...types.TransactWriteItem) error {
		_, err := join.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		return err
	}
	put := func(pk string) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{TableName: table, Item: key(pk)}}
	}
	allowed(t, "join puts ROOM# and GSESSION#", tx(put("ROOM#1"), put("GSESSION#1")))
	denied(t, "join puts WS#", tx(put("ROOM#2"), put("WS#2")))
	denied(t, "join deletes ROOM# (it may delete GSESSION# only)", tx(put("GSESSION#3"),
		types.TransactWriteItem{Delete: &types.Delete{TableName: table, Key: key("ROOM#1")}}))
	got, err := dynamodb.NewFromConfig(admin).GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key("GSESSION#3")})
	if err != nil || got.Item != nil {
		t.Fatalf("a denied transaction wrote: got %v %v, want nothing", got.Item, err)
	}

	// The sweep may query its index's shards (PENDING#NN) and not the table.
	sweep := dynamodb.NewFromConfig(as("TranslationSweepFunction"))
	_, err = sweep.Query(ctx, &dynamodb.QueryInput{TableName: table, IndexName: aws.String("PendingTranslationIndex"),
		KeyConditionExpression: aws.String("pending_shard = :s"), ExpressionAttributeValues: map[string]types.AttributeValue{":s": s("PENDING#03")}})
	allowed(t, "sweep Query on its index", err)
	_, err = sweep.Query(ctx, &dynamodb.QueryInput{TableName: table, IndexName: aws.String("PendingTranslationIndex"),
		KeyConditionExpression: aws.String("pending_shard = :s"), ExpressionAttributeValues: map[string]types.AttributeValue{":s": s("3")}})
	denied(t, "sweep Query on its index outside the PENDING# shards", err)
	_, err = sweep.Query(ctx, &dynamodb.QueryInput{TableName: table, KeyConditionExpression: aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("CHAN#1")}})
	denied(t, "sweep Query on the table", err)

	// SQS: the queue is named by its logical id; batches are their action.
	q := sqs.NewFromConfig(as("TranslationSweepFunction"))
	_, err = q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(res.Queues["TranslationQueue"]),
		Entries: []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("1"), MessageBody: aws.String("{}")}}})
	allowed(t, "sweep SendMessageBatch to TranslationQueue", err)
	_, err = q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(res.Queues["TranslationDLQ"]), MessageBody: aws.String("{}")})
	denied(t, "sweep SendMessage to TranslationDLQ", err)
	_, err = q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(res.Queues["TranslationQueue"])})
	denied(t, "sweep ReceiveMessage", err)
	translate := sqs.NewFromConfig(as("TranslateFunction"))
	_, err = translate.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(res.Queues["TranslationQueue"])})
	allowed(t, "translate ReceiveMessage from its event source's queue", err)

	// The record: distinct allowed calls with key prefixes; every denial.
	var sawPrefix bool
	for _, c := range check.Allowed() {
		if c.Function == "OutboxRelayFunction" && c.Action == "dynamodb:BatchWriteItem" {
			sawPrefix = len(c.LeadingKeys) == 1 && c.LeadingKeys[0] == "EVENT#"
		}
	}
	if !sawPrefix {
		t.Fatalf("allowed calls %+v: want the relay's BatchWriteItem recorded with prefix EVENT#", check.Allowed())
	}
	if n := len(check.Denied()); n != 10 {
		t.Fatalf("got %d denied calls recorded, want 10: %+v", n, check.Denied())
	}
}
