// Package streampoll reads a DynamoDB stream locally, as a Lambda event
// source mapping does in AWS, for consumers other than the outbox relay
// (which has its own reader in package localrun): it hands every record,
// in shard order, to a function, until its context ends.
package streampoll

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// Record is one stream record: its event name (INSERT, MODIFY, REMOVE)
// and images.
type Record struct {
	EventName string
	OldImage  map[string]types.AttributeValue
	NewImage  map[string]types.AttributeValue
}

// Poll reads the stream streamARN from its start every interval and calls
// h with each record. It returns when ctx ends.
func Poll(ctx context.Context, streams *dynamodbstreams.Client, streamARN string, every time.Duration, h func(context.Context, Record)) {
	type shard struct {
		iter         *string
		last         string
		closed, seen bool
	}
	shards := map[string]*shard{}
	for ctx.Err() == nil {
		if desc, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &streamARN}); err == nil {
			for _, sh := range desc.StreamDescription.Shards {
				if id := aws.ToString(sh.ShardId); shards[id] == nil {
					shards[id] = &shard{}
				}
			}
		}
		for id, sh := range shards {
			if sh.closed {
				continue
			}
			if sh.iter == nil {
				in := &dynamodbstreams.GetShardIteratorInput{StreamArn: &streamARN, ShardId: aws.String(id), ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon}
				if sh.last != "" {
					in.ShardIteratorType, in.SequenceNumber = streamtypes.ShardIteratorTypeAfterSequenceNumber, aws.String(sh.last)
				}
				it, err := streams.GetShardIterator(ctx, in)
				if err != nil {
					continue
				}
				sh.iter = it.ShardIterator
			}
			out, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: sh.iter})
			var expired *streamtypes.ExpiredIteratorException
			if errors.As(err, &expired) {
				sh.iter = nil
				continue
			}
			if err != nil {
				if ctx.Err() == nil {
					slog.WarnContext(ctx, "streampoll: get records", "error", err.Error())
				}
				continue
			}
			sh.iter, sh.closed = out.NextShardIterator, out.NextShardIterator == nil
			for _, rec := range out.Records {
				if rec.Dynamodb == nil {
					continue
				}
				sh.last = aws.ToString(rec.Dynamodb.SequenceNumber)
				oldImage, err1 := attributevalue.FromDynamoDBStreamsMap(rec.Dynamodb.OldImage)
				newImage, err2 := attributevalue.FromDynamoDBStreamsMap(rec.Dynamodb.NewImage)
				if err1 != nil || err2 != nil {
					continue
				}
				h(ctx, Record{EventName: string(rec.EventName), OldImage: oldImage, NewImage: newImage})
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(every):
		}
	}
}
