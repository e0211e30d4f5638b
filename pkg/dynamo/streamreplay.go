package dynamo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
)

// ParkedRetention is how long a parked stream record is kept: longer than
// RelayFailureQueue keeps the failure record that points to it (14 days),
// so a failure record never outlives the records it names.
const ParkedRetention = 15 * 24 * time.Hour

// seqDigits is the width sequence numbers are padded to in a sort key, so
// that string order is numeric order (they have up to 40 digits).
const seqDigits = 40

// StreamRecord is one record of the table's stream as the relay reads it:
// what the relay's work depends on, and no more (the old image is not).
type StreamRecord struct {
	// Seq is the record's sequence number.
	Seq       string
	EventName string
	// At is the record's approximate creation time.
	At    time.Time
	Image map[string]types.AttributeValue
}

// StreamRecordOf converts a record of a Lambda DynamoDB stream event.
func StreamRecordOf(rec events.DynamoDBEventRecord) StreamRecord {
	return StreamRecord{Seq: rec.Change.SequenceNumber, EventName: rec.EventName,
		At: rec.Change.ApproximateCreationDateTime.Time, Image: FromLambdaImage(rec.Change.NewImage)}
}

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
	if len(seq) >= seqDigits {
		return seq
	}
	return strings.Repeat("0", seqDigits-len(seq)) + seq
}

// ParkStreamRecords keeps recs of stream for a replay of the relay's
// failures (pkg/relay), with BatchWriteItem, 25 a call; parking a record
// again overwrites it with the same content. Errors: EUnavailable;
// EInternal for a record DynamoDB refuses (an image near the 400 KB item
// limit).
func (s *Table) ParkStreamRecords(ctx context.Context, stream string, recs []StreamRecord, now time.Time) error {
	reqs := make([]types.WriteRequest, 0, len(recs))
	for _, r := range recs {
		item := map[string]types.AttributeValue{
			AttrPK: Str(parkedPK(stream)), AttrSK: Str(parkedSK(r.Seq)), attrParkedSeq: Str(r.Seq),
			attrParkedEvent: Str(r.EventName), attrParkedAt: Num(r.At.UnixNano()),
			attrParkedImage: &types.AttributeValueMemberM{Value: r.Image}, AttrTTL: Num(Epoch(now.Add(ParkedRetention))),
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	return s.BatchWrite(ctx, "park stream records", reqs)
}

// ParkedStreamRecords returns the records of stream parked with sequence
// numbers from to to, inclusive, in stream order: one Query (paged).
// Errors: EUnavailable.
func (s *Table) ParkedStreamRecords(ctx context.Context, stream, from, to string) ([]StreamRecord, error) {
	p := dynamodb.NewQueryPaginator(s.Client, &dynamodb.QueryInput{
		TableName:              &s.Name,
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": Str(parkedPK(stream)), ":from": Str(parkedSK(from)), ":to": Str(parkedSK(to))},
		ConsistentRead: aws.Bool(true),
	})
	var out []StreamRecord
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, Fail("query parked stream records", err)
		}
		for _, it := range page.Items {
			image, ok := it[attrParkedImage].(*types.AttributeValueMemberM)
			if !ok {
				return nil, chat.Internal(fmt.Errorf("dynamo: parked stream record %s: no image", GetS(it, AttrSK)))
			}
			out = append(out, StreamRecord{Seq: GetS(it, attrParkedSeq), EventName: GetS(it, attrParkedEvent),
				At: time.Unix(0, getN(it, attrParkedAt)).UTC(), Image: image.Value})
		}
	}
	return out, nil
}
