package deliverystore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/oklog/ulid/v2"
)

var (
	_ delivery.RecoverStore = (*Store)(nil)
	_ delivery.TestLog      = (*Store)(nil)
)

// idBound returns the smallest (or, high, the largest) ULID timed at t:
// a delivery id carries its event's time, so a window of times is a
// range of sort keys.
func idBound(t time.Time, high bool) string {
	var id ulid.ULID
	if t.Before(time.UnixMilli(0)) {
		t = time.UnixMilli(0)
	}
	if err := id.SetTime(ulid.Timestamp(t)); err != nil {
		_ = id.SetTime(ulid.MaxTime())
	}
	if high {
		for i := 6; i < len(id); i++ {
			id[i] = 0xff
		}
	}
	return id.String()
}

// FailedDeliveries implements delivery.RecoverStore with Queries of
// FailedDeliveryIndex between the window's ids: it reads the webhook's
// failed deliveries only, at most limit (Limit: one Query, another only
// past a 1 MB page of about 2,500 rows), however many succeeded in the
// window. The index is
// eventually consistent: a row may lag its record by a moment (a delivery
// failed in the last second may be missing, or one just taken up still
// listed), which ClaimFailed's condition on the record settles.
func (s *Store) FailedDeliveries(ctx context.Context, ws, webhookID string, since, until time.Time, limit int) ([]delivery.Record, error) {
	in := &dynamodb.QueryInput{TableName: &s.Name, IndexName: aws.String(FailedDeliveryIndex),
		KeyConditionExpression: aws.String("pk = :pk AND " + attrFailedID + " BETWEEN :lo AND :hi"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(deliveryPK(ws, webhookID)),
			":lo": dynamo.Str(idBound(since, false)), ":hi": dynamo.Str(idBound(until, true))}}
	var out []delivery.Record
	for {
		if limit > 0 {
			in.Limit = aws.Int32(int32(min(limit-len(out), math.MaxInt32)))
		}
		page, err := s.Client.Query(ctx, in)
		if err != nil {
			return nil, dynamo.Fail("failed deliveries of "+webhookID, err)
		}
		for _, av := range page.Items {
			// The index projects the record's identity and attempts only.
			var it deliveryItem
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				return nil, chat.Internal(fmt.Errorf("dynamo: failed delivery of %s: %w", webhookID, err))
			}
			r := it.record()
			r.Status = delivery.StatusFailed
			out = append(out, r)
			if len(out) == limit {
				return out, nil
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// ClaimFailed implements delivery.RecoverStore with one conditional
// UpdateItem of the record itself: failed with no attempt under way
// becomes pending, due at, and leaves FailedDeliveryIndex. The condition
// is on the record, not on the index's row, which may lag: the attempts
// claimed are the record's (ALL_OLD), not the row's.
func (s *Store) ClaimFailed(ctx context.Context, rec delivery.Record, at time.Time) (int, bool, error) {
	out, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name, Key: dynamo.Key(deliveryPK(rec.WorkspaceID, rec.WebhookID), deliverySK(rec.ID)),
		UpdateExpression:         aws.String("SET #st = :pending, #next = :at REMOVE #fid"),
		ConditionExpression:      aws.String("#st = :failed AND attribute_not_exists(#l)"),
		ExpressionAttributeNames: map[string]string{"#st": "status", "#next": attrNextAt, "#l": attrLease, "#fid": attrFailedID},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pending": dynamo.Str(delivery.StatusPending), ":failed": dynamo.Str(delivery.StatusFailed),
			":at": dynamo.Str(at.UTC().Format(time.RFC3339Nano))},
		ReturnValues: types.ReturnValueAllOld})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, dynamo.Fail("claim failed delivery "+rec.ID, err)
	}
	n := int(dynamo.GetN(out.Attributes, attrAttempts))
	if n < 1 {
		return 0, false, chat.Internal(fmt.Errorf("dynamo: claimed delivery %s after %d attempts", rec.ID, n))
	}
	return n, true, nil
}

// ReleaseClaim implements delivery.RecoverStore with one UpdateItem,
// unless an attempt of the delivery has started meanwhile: the record is
// failed again, back in FailedDeliveryIndex.
func (s *Store) ReleaseClaim(ctx context.Context, rec delivery.Record) error {
	_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name, Key: dynamo.Key(deliveryPK(rec.WorkspaceID, rec.WebhookID), deliverySK(rec.ID)),
		UpdateExpression:         aws.String("SET #st = :failed, #fid = :id REMOVE #next"),
		ConditionExpression:      aws.String("#st = :pending AND #a = :n AND attribute_not_exists(#l)"),
		ExpressionAttributeNames: map[string]string{"#st": "status", "#next": attrNextAt, "#a": attrAttempts, "#l": attrLease, "#fid": attrFailedID},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pending": dynamo.Str(delivery.StatusPending), ":failed": dynamo.Str(delivery.StatusFailed),
			":n": dynamo.Num(int64(rec.Attempts)), ":id": dynamo.Str(rec.ID)}})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil
	}
	return dynamo.Fail("release delivery "+rec.ID, err)
}

// PutTestDelivery implements delivery.TestLog with one PutItem: the test
// delivery's record, its one attempt made.
func (s *Store) PutTestDelivery(ctx context.Context, a delivery.Attempt) error {
	d := a.Delivery
	it := deliveryItem{PK: deliveryPK(d.WorkspaceID, d.WebhookID), SK: deliverySK(d.ID), ID: d.ID, WebhookID: d.WebhookID, Kind: d.Kind,
		WorkspaceID: d.WorkspaceID, WebhookKey: d.WebhookKey, EventID: d.EventID, EventType: d.EventType, Status: a.Status,
		Attempts: a.Number, LastAttemptAt: a.At.UTC(), ResponseStatus: a.ResponseStatus, Error: a.Error, DurationMS: a.DurationMS,
		CreatedAt: a.At.UTC()}
	av := dynamo.Put(s.Name, it, "", nil).Put.Item
	av["ttl"] = dynamo.Num(dynamo.Epoch(a.At.Add(chat.DeliveryRetention)))
	_, err := s.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.Name, Item: av})
	return dynamo.Fail("put test delivery "+d.ID, err)
}
