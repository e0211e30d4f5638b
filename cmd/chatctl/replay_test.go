package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/relay"
)

// TestReplayRelayFailuresCommand replays a failure record, as Lambda
// writes it, with the documented command: the relay parked the record (as
// it does for every record it could not finish), and the command, with no
// stream read, puts the message's job on the translation queue and its
// message.created on the delivery queue, and empties the failure queue.
func TestReplayRelayFailuresCommand(t *testing.T) {
	st := stacktest.New(t)
	ctx := context.Background()
	t.Setenv(awsenv.EnvTable, st.Table)
	now := time.Now()
	ids := chat.NewIDs()
	m := chat.Message{ID: ids.New(now), WorkspaceID: ids.New(now), ChannelID: ids.New(now),
		Author: chat.Author{Type: chat.AuthorBot, Name: "CI Bot"}, Content: strings.Repeat("<", 40000),
		SourceLanguage: "en", Status: chat.MessageQueued, CreatedAt: now}
	store := storetest.New(st.DB, st.Table)
	if err := store.PutMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	hook, err := attributevalue.MarshalMap(map[string]any{"pk": "WS#" + m.WorkspaceID, "sk": "OWH#2026-01-01T00:00:00.000000000Z#" + ids.New(now),
		"id": ids.New(now), "active": true, "url": "https://out.example.invalid/", "signing_secret": "s", "events": []string{"message.created"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &st.Table, Item: hook}); err != nil {
		t.Fatal(err)
	}
	streams := dynamodbstreams.NewFromConfig(st.AWS)
	desc, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &st.Resources.StreamARN})
	if err != nil {
		t.Fatal(err)
	}
	shard := desc.StreamDescription.Shards[0].ShardId
	it, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &st.Resources.StreamARN,
		ShardId: shard, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
	if err != nil || len(recs.Records) != 2 {
		t.Fatalf("stream: %d records, %v; want the webhook's and the message's", len(recs.Records), err)
	}
	insert := recs.Records[0] // the message's insert, written first
	seq := aws.ToString(insert.Dynamodb.SequenceNumber)
	image, err := attributevalue.FromDynamoDBStreamsMap(insert.Dynamodb.NewImage)
	if err != nil {
		t.Fatal(err)
	}
	parked := dynamo.StreamRecord{Seq: seq, EventName: string(insert.EventName), At: aws.ToTime(insert.Dynamodb.ApproximateCreationDateTime), Image: image}
	if err := store.Relay.ParkStreamRecords(ctx, st.Resources.StreamARN, []dynamo.StreamRecord{parked}, now); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{
		"requestContext": map[string]any{"condition": "RetryAttemptsExhausted"},
		"DDBStreamBatchInfo": map[string]any{"streamArn": st.Resources.StreamARN, "shardId": aws.ToString(shard),
			"startSequenceNumber": seq, "endSequenceNumber": seq, "batchSize": 1},
	})
	failures, queue, deliveries := st.Resources.Queues["RelayFailureQueue"], st.Resources.Queues["TranslationQueue"], st.Resources.Queues["DeliveryQueue"]
	if _, err := st.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &failures, MessageBody: aws.String(string(body))}); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"replay-relay-failures", "--failure-queue-url", failures, "--queue-url", queue, "--delivery-queue-url", deliveries}, nil, &out, &errOut); err != nil {
		t.Fatalf("replay-relay-failures: %v\n%s", err, errOut.String())
	}
	var res relay.ReplayResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Records != 1 || res.Replayed != 1 || res.StreamRecords != 1 {
		t.Fatalf("output %s (%v), want one failure record replayed from its one parked record", out.String(), err)
	}
	sent, err := st.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &deliveries, MaxNumberOfMessages: 10})
	if err != nil || len(sent.Messages) != 1 {
		t.Fatalf("delivery queue holds %d deliveries (%v), want 1", len(sent.Messages), err)
	}
	if d, err := events.UnmarshalQueue(aws.ToString(sent.Messages[0].Body)); err != nil || d.EventType != events.MessageCreated {
		t.Fatalf("delivery %+v %v, want message.created", d, err)
	}
	got, err := st.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &queue, MaxNumberOfMessages: 10})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("translation queue holds %d jobs (%v), want 1", len(got.Messages), err)
	}
	if job, err := messages.DecodeJob(aws.ToString(got.Messages[0].Body)); err != nil || job.MessageID != m.ID {
		t.Fatalf("job %+v %v, want message %s", job, err, m.ID)
	}
	left, err := st.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &failures, MaxNumberOfMessages: 10, VisibilityTimeout: 0})
	if err != nil || len(left.Messages) != 0 {
		t.Fatalf("failure queue still holds %d records (%v)", len(left.Messages), err)
	}

	if err := run(ctx, []string{"replay-relay-failures"}, nil, &out, &errOut); err == nil || !strings.Contains(err.Error(), "--delivery-queue-url") {
		t.Fatalf("without queue URLs: %v, want an error naming the flag", err)
	}
}
