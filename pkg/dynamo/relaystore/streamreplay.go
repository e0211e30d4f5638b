package relaystore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
)

// ParkedRetention is how long a parked stream record is kept: longer than
// RelayFailureQueue keeps the failure record that points to it (14 days),
// so a failure record never outlives the records it names.
const ParkedRetention = 15 * 24 * time.Hour

// A parked record is a stream record the relay could not finish: pk
// RELAYPARK#<stream ARN>#<shard 00-15, by the sequence number>, sk
// <sequence number, zero-padded>, so a failure record's range is one Query
// a shard; the image is kept as the map it was. The shards spread an
// outage's parking over 16 partitions (16,000 write units a second, not
// 1,000: a batch of ten 40,000-character messages is up to 1,600 units).
const parkShards = 16

const (
	attrParkedSeq      = "seq"
	attrParkedEvent    = "event_name"
	attrParkedAt       = "at_ns"
	attrParkedImage    = "image"
	attrParkedOldImage = "old_image"
)

// parkedPK is the partition of the record with sequence number seq.
func parkedPK(stream, seq string) string {
	h := fnv.New32a()
	h.Write([]byte(strings.TrimLeft(seq, "0")))
	return parkedShardPK(stream, int(h.Sum32()%parkShards))
}

func parkedShardPK(stream string, shard int) string {
	return fmt.Sprintf("RELAYPARK#%s#%02d", stream, shard)
}

func parkedSK(seq string) string {
	if len(seq) >= dynamo.SeqDigits {
		return seq
	}
	return strings.Repeat("0", dynamo.SeqDigits-len(seq)) + seq
}

// ParkStreamRecords keeps recs of stream for a replay of the relay's
// failures (pkg/relay), with BatchWriteItem, 25 a call; parking a record
// again overwrites it with the same content. Errors: EUnavailable;
// EInternal for a record DynamoDB refuses (an image near the 400 KB item
// limit).
func (s *Store) ParkStreamRecords(ctx context.Context, stream string, recs []dynamo.StreamRecord, now time.Time) error {
	reqs := make([]types.WriteRequest, 0, len(recs))
	for _, r := range recs {
		item := map[string]types.AttributeValue{
			dynamo.AttrPK: dynamo.Str(parkedPK(stream, r.Seq)), dynamo.AttrSK: dynamo.Str(parkedSK(r.Seq)), attrParkedSeq: dynamo.Str(r.Seq),
			attrParkedEvent: dynamo.Str(r.EventName), attrParkedAt: dynamo.Num(r.At.UnixNano()),
			attrParkedImage: &types.AttributeValueMemberM{Value: r.Image}, dynamo.AttrTTL: dynamo.Num(dynamo.Epoch(now.Add(ParkedRetention))),
		}
		// A reactions reader item's old image tells which emoji it lost
		// (ReactionChangeOf); it is small, unlike a message's.
		if len(r.OldImage) > 0 && strings.HasPrefix(dynamo.GetS(r.OldImage, dynamo.AttrPK), readerPrefix) {
			item[attrParkedOldImage] = &types.AttributeValueMemberM{Value: r.OldImage}
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	return s.BatchWrite(ctx, "park stream records", reqs)
}

// ParkedStreamRecords returns the records of stream parked with sequence
// numbers from to to, inclusive, in stream order: one Query (paged) a
// shard, the shards read concurrently. Errors: EUnavailable.
func (s *Store) ParkedStreamRecords(ctx context.Context, stream, from, to string) ([]dynamo.StreamRecord, error) {
	var (
		mu   sync.Mutex
		out  []dynamo.StreamRecord
		errs = make([]error, parkShards)
		wg   sync.WaitGroup
	)
	for shard := range parkShards {
		wg.Go(func() {
			recs, err := s.parkedShard(ctx, parkedShardPK(stream, shard), from, to)
			mu.Lock()
			defer mu.Unlock()
			out, errs[shard] = append(out, recs...), err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b dynamo.StreamRecord) int { return strings.Compare(parkedSK(a.Seq), parkedSK(b.Seq)) })
	return out, nil
}

// parkedShard is one shard's records from from to to.
func (s *Store) parkedShard(ctx context.Context, pk, from, to string) ([]dynamo.StreamRecord, error) {
	p := dynamodb.NewQueryPaginator(s.Client, &dynamodb.QueryInput{
		TableName:              &s.Name,
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": dynamo.Str(pk), ":from": dynamo.Str(parkedSK(from)), ":to": dynamo.Str(parkedSK(to))},
		ConsistentRead: aws.Bool(true),
	})
	var out []dynamo.StreamRecord
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, dynamo.Fail("query parked stream records", err)
		}
		for _, it := range page.Items {
			image, ok := it[attrParkedImage].(*types.AttributeValueMemberM)
			if !ok {
				return nil, chat.Internal(fmt.Errorf("dynamo: parked stream record %s: no image", dynamo.GetS(it, dynamo.AttrSK)))
			}
			rec := dynamo.StreamRecord{Seq: dynamo.GetS(it, attrParkedSeq), EventName: dynamo.GetS(it, attrParkedEvent),
				At: time.Unix(0, dynamo.GetN(it, attrParkedAt)).UTC(), Image: image.Value}
			if old, ok := it[attrParkedOldImage].(*types.AttributeValueMemberM); ok {
				rec.OldImage = old.Value
			}
			out = append(out, rec)
		}
	}
	return out, nil
}
