package localstack

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/relay"
)

// RelayStream does locally what the outbox relay's event source mapping
// does in AWS: it reads the table's stream from its start and hands every
// message insert to r, and every change that reports an event to r.Events,
// retrying the records r could not send. It returns
// when ctx ends.
func RelayStream(ctx context.Context, streams *dynamodbstreams.Client, streamARN string, r *relay.Relay, every time.Duration) error {
	iters := map[string]*string{}
	var pending []relay.Entry
	var changes []relay.ChangeEntry
	for {
		if err := refreshShards(ctx, streams, streamARN, iters); err != nil && ctx.Err() == nil {
			slog.WarnContext(ctx, "local relay: describe stream", "error", err.Error())
		}
		for shard, it := range iters {
			if it == nil {
				continue
			}
			out, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it})
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				slog.WarnContext(ctx, "local relay: get records", "error", err.Error())
				continue
			}
			iters[shard] = out.NextShardIterator
			for _, rec := range out.Records {
				if rec.Dynamodb == nil {
					continue
				}
				image, err := attributevalue.FromDynamoDBStreamsMap(rec.Dynamodb.NewImage)
				if err != nil {
					continue
				}
				if c, ok := dynamo.ChangeFromImage(string(rec.EventName), image); ok && r.Events != nil {
					changes = append(changes, relay.ChangeEntry{ID: aws.ToString(rec.Dynamodb.SequenceNumber), Change: c,
						At: aws.ToTime(rec.Dynamodb.ApproximateCreationDateTime)})
				}
				if rec.EventName != streamtypes.OperationTypeInsert {
					continue
				}
				if m, ok := dynamo.MessageFromImage(image); ok {
					pending = append(pending, relay.Entry{ID: aws.ToString(rec.Dynamodb.SequenceNumber), Message: m})
				}
			}
		}
		if len(pending) > 0 {
			failed := map[string]bool{}
			for _, id := range r.Forward(ctx, pending) {
				failed[id] = true
			}
			kept := pending[:0]
			for _, e := range pending {
				if failed[e.ID] {
					kept = append(kept, e)
				}
			}
			pending = kept
		}
		if len(changes) > 0 {
			failed := map[string]bool{}
			for _, id := range r.Events.Send(ctx, changes) {
				failed[id] = true
			}
			kept := changes[:0]
			for _, e := range changes {
				if failed[e.ID] {
					kept = append(kept, e)
				}
			}
			changes = kept
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
	}
}

func refreshShards(ctx context.Context, streams *dynamodbstreams.Client, arn string, iters map[string]*string) error {
	desc, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &arn})
	if err != nil {
		return err
	}
	for _, sh := range desc.StreamDescription.Shards {
		id := aws.ToString(sh.ShardId)
		if _, ok := iters[id]; ok {
			continue
		}
		it, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
			StreamArn: &arn, ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			return err
		}
		iters[id] = it.ShardIterator
	}
	return nil
}

// SQSHandler is a Lambda handler of SQS events with partial batch
// responses.
type SQSHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// ConsumeQueue does locally what an SQS event source mapping does in AWS:
// it long-polls the queue, invokes h with real events.SQSEvent batches, and
// deletes the records h did not report as failed; failed ones come back
// after their visibility timeout, and the queue's redrive policy moves
// poison ones to the dead-letter queue. It returns when ctx ends.
func ConsumeQueue(ctx context.Context, q *sqs.Client, queueURL, queueARN string, batch int32, h SQSHandler) error {
	for ctx.Err() == nil {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: &queueURL, MaxNumberOfMessages: batch, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return nil
			}
			slog.WarnContext(ctx, "local consumer: receive", "error", err.Error())
			time.Sleep(time.Second)
			continue
		}
		if len(out.Messages) == 0 {
			continue
		}
		ev := events.SQSEvent{}
		for _, m := range out.Messages {
			ev.Records = append(ev.Records, events.SQSMessage{
				MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
				Body: aws.ToString(m.Body), Md5OfBody: aws.ToString(m.MD5OfBody), Attributes: m.Attributes,
				EventSource: "aws:sqs", EventSourceARN: queueARN, AWSRegion: "us-east-1",
			})
		}
		resp, err := h(ctx, ev)
		failed := map[string]bool{}
		if err != nil {
			// A whole-batch error: Lambda would retry every record.
			slog.WarnContext(ctx, "local consumer: handler failed", "error", err.Error())
			continue
		}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		var del []sqstypes.DeleteMessageBatchRequestEntry
		for i, m := range out.Messages {
			if !failed[aws.ToString(m.MessageId)] {
				del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
			}
		}
		if len(del) > 0 {
			if _, err := q.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &queueURL, Entries: del}); err != nil && ctx.Err() == nil {
				slog.WarnContext(ctx, "local consumer: delete", "error", err.Error())
			}
		}
	}
	return nil
}
