package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/relay"
)

// TestReplayRelayFailuresCommand replays a failure record, as Lambda
// writes it, with the documented command: the message is on the
// translation queue and the failure queue is empty.
func TestReplayRelayFailuresCommand(t *testing.T) {
	st := stacktest.New(t)
	ctx := context.Background()
	t.Setenv(awsenv.EnvTable, st.Table)
	now := time.Now()
	ids := chat.NewIDs()
	m := chat.Message{ID: ids.New(now), WorkspaceID: ids.New(now), ChannelID: ids.New(now),
		Author: chat.Author{Type: chat.AuthorBot, Name: "CI Bot"}, Content: strings.Repeat("<", 40000),
		SourceLanguage: "en", Status: chat.MessageQueued, CreatedAt: now}
	if err := dynamo.New(st.DB, st.Table).PutMessage(ctx, m); err != nil {
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
	if err != nil || len(recs.Records) != 1 {
		t.Fatalf("stream: %d records, %v", len(recs.Records), err)
	}
	seq := aws.ToString(recs.Records[0].Dynamodb.SequenceNumber)
	body, _ := json.Marshal(map[string]any{
		"requestContext": map[string]any{"condition": "RetryAttemptsExhausted"},
		"DDBStreamBatchInfo": map[string]any{"streamArn": st.Resources.StreamARN, "shardId": aws.ToString(shard),
			"startSequenceNumber": seq, "endSequenceNumber": seq, "batchSize": 1},
	})
	failures, queue := st.Resources.Queues["RelayFailureQueue"], st.Resources.Queues["TranslationQueue"]
	if _, err := st.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &failures, MessageBody: aws.String(string(body))}); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"replay-relay-failures", "--failure-queue-url", failures, "--queue-url", queue}, nil, &out, &errOut); err != nil {
		t.Fatalf("replay-relay-failures: %v\n%s", err, errOut.String())
	}
	var res relay.ReplayResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Records != 1 || res.FromStream != 1 || res.Messages != 1 {
		t.Fatalf("output %s (%v), want one record replayed from the stream", out.String(), err)
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

	if err := run(ctx, []string{"replay-relay-failures"}, nil, &out, &errOut); err == nil || !strings.Contains(err.Error(), "--failure-queue-url") {
		t.Fatalf("without queue URLs: %v, want an error naming the flag", err)
	}
}
