package relaystore

import (
	"context"
	"fmt"
	"strings"
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
// RELAYPARK#<stream ARN>, sk <sequence number, zero-padded>, so a failure
// record's range is one Query; the image is kept as the map it was.
const (
	attrParkedSeq   = "seq"
	attrParkedEvent = "event_name"
	attrParkedAt    = "at_ns"
	attrParkedImage = "image"
)

func parkedPK(stream string) string { return "RELAYPARK#" + stream }

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
			dynamo.AttrPK: dynamo.Str(parkedPK(stream)), dynamo.AttrSK: dynamo.Str(parkedSK(r.Seq)), attrParkedSeq: dynamo.Str(r.Seq),
			attrParkedEvent: dynamo.Str(r.EventName), attrParkedAt: dynamo.Num(r.At.UnixNano()),
			attrParkedImage: &types.AttributeValueMemberM{Value: r.Image}, dynamo.AttrTTL: dynamo.Num(dynamo.Epoch(now.Add(ParkedRetention))),
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	return s.BatchWrite(ctx, "park stream records", reqs)
}

// ParkedStreamRecords returns the records of stream parked with sequence
// numbers from to to, inclusive, in stream order: one Query (paged).
// Errors: EUnavailable.
func (s *Store) ParkedStreamRecords(ctx context.Context, stream, from, to string) ([]dynamo.StreamRecord, error) {
	p := dynamodb.NewQueryPaginator(s.Client, &dynamodb.QueryInput{
		TableName:              &s.Name,
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": dynamo.Str(parkedPK(stream)), ":from": dynamo.Str(parkedSK(from)), ":to": dynamo.Str(parkedSK(to))},
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
			out = append(out, dynamo.StreamRecord{Seq: dynamo.GetS(it, attrParkedSeq), EventName: dynamo.GetS(it, attrParkedEvent),
				At: time.Unix(0, dynamo.GetN(it, attrParkedAt)).UTC(), Image: image.Value})
		}
	}
	return out, nil
}
