package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/chatbridge/chat/pkg/chat"
)

// maxReplayPages bounds the GetRecords calls of one replayed range: a range
// the relay was given holds at most its batch of records, yet an open shard
// may answer empty pages before them.
const maxReplayPages = 100

// StreamReader reads message inserts back from the table's stream, for
// replaying the relay's failure records. It implements relay.StreamReader.
type StreamReader struct{ client *dynamodbstreams.Client }

// NewStreamReader returns a reader using client.
func NewStreamReader(client *dynamodbstreams.Client) *StreamReader {
	return &StreamReader{client: client}
}

// Messages returns the messages inserted in shard of stream at sequence
// numbers from to to, inclusive: one GetShardIterator, then GetRecords
// until a record past to (or the shard's end). Errors: ENotFound when the
// stream no longer holds the range (trimmed after 24 hours, an expired
// iterator, a stream or shard that is gone); EUnavailable otherwise.
func (r *StreamReader) Messages(ctx context.Context, stream, shard, from, to string) ([]chat.Message, error) {
	op := fmt.Sprintf("read stream shard %s from %s to %s", shard, from, to)
	it, err := r.client.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn: &stream, ShardId: &shard, SequenceNumber: &from,
		ShardIteratorType: streamtypes.ShardIteratorTypeAtSequenceNumber,
	})
	if err != nil {
		return nil, streamFail(op, err)
	}
	var out []chat.Message
	next := it.ShardIterator
	for page := 0; next != nil && page < maxReplayPages; page++ {
		recs, err := r.client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: next})
		if err != nil {
			return nil, streamFail(op, err)
		}
		for _, rec := range recs.Records {
			if rec.Dynamodb == nil {
				continue
			}
			if seqAfter(aws.ToString(rec.Dynamodb.SequenceNumber), to) {
				return out, nil
			}
			if rec.EventName != streamtypes.OperationTypeInsert {
				continue
			}
			image, err := attributevalue.FromDynamoDBStreamsMap(rec.Dynamodb.NewImage)
			if err != nil {
				continue
			}
			if m, ok := MessageFromImage(image); ok {
				out = append(out, m)
			}
		}
		next = recs.NextShardIterator
	}
	return out, nil
}

// seqAfter reports whether sequence number a comes after b. They are
// decimal numbers of up to 40 digits, past any integer type.
func seqAfter(a, b string) bool {
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a > b
}

// streamFail maps a stream error: records that are no longer there are
// ENotFound, anything else is EUnavailable.
func streamFail(op string, err error) error {
	var (
		trimmed *streamtypes.TrimmedDataAccessException
		expired *streamtypes.ExpiredIteratorException
		missing *streamtypes.ResourceNotFoundException
	)
	if errors.As(err, &trimmed) || errors.As(err, &expired) || errors.As(err, &missing) {
		return chat.Errorf(chat.ENotFound, "dynamo: %s: %v", op, err)
	}
	return chat.Unavailable(fmt.Errorf("dynamo: %s: %w", op, err))
}
