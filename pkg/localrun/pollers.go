package localrun

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
//
// An iterator that has expired (ExpiredIteratorException: in AWS after 15
// minutes; locally after a cancelled transaction, see package motoserver)
// is replaced by a new one after the last record read, so no record is
// read twice or skipped.
func RelayStream(ctx context.Context, streams *dynamodbstreams.Client, streamARN string, r *relay.Relay, every time.Duration) error {
	shards := map[string]*shardReader{}
	var pending []relay.Entry
	var changes []relay.ChangeEntry
	for {
		if err := refreshShards(ctx, streams, streamARN, shards); err != nil && ctx.Err() == nil {
			slog.WarnContext(ctx, "local relay: describe stream", "error", err.Error())
		}
		for _, sh := range shards {
			recs, err := sh.read(ctx, streams, streamARN)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				slog.WarnContext(ctx, "local relay: get records", "error", err.Error())
				continue
			}
			for _, rec := range recs {
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

// shardReader reads one shard in order.
type shardReader struct {
	id string
	// iter is the next iterator; nil once the shard is closed and read.
	iter *string
	// last is the sequence number of the last record read ("" for none).
	last   string
	closed bool
}

// read returns the shard's next records. After an expired iterator it
// returns none, and the next call reads on from a new iterator after the
// last record read.
func (s *shardReader) read(ctx context.Context, streams *dynamodbstreams.Client, arn string) ([]streamtypes.Record, error) {
	if s.closed {
		return nil, nil
	}
	if s.iter == nil {
		in := &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn, ShardId: &s.id, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon}
		if s.last != "" {
			in.ShardIteratorType, in.SequenceNumber = streamtypes.ShardIteratorTypeAfterSequenceNumber, aws.String(s.last)
		}
		it, err := streams.GetShardIterator(ctx, in)
		if err != nil {
			return nil, err
		}
		s.iter = it.ShardIterator
	}
	out, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: s.iter})
	var expired *streamtypes.ExpiredIteratorException
	if errors.As(err, &expired) {
		// The next poll starts a new iterator after s.last.
		s.iter = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.iter = out.NextShardIterator
	s.closed = out.NextShardIterator == nil
	if n := len(out.Records); n > 0 && out.Records[n-1].Dynamodb != nil {
		s.last = aws.ToString(out.Records[n-1].Dynamodb.SequenceNumber)
	}
	return out.Records, nil
}

func refreshShards(ctx context.Context, streams *dynamodbstreams.Client, arn string, shards map[string]*shardReader) error {
	desc, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &arn})
	if err != nil {
		return err
	}
	for _, sh := range desc.StreamDescription.Shards {
		id := aws.ToString(sh.ShardId)
		if _, ok := shards[id]; !ok {
			shards[id] = &shardReader{id: id}
		}
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
