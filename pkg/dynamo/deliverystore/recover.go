package deliverystore

import (
	"context"
	"errors"
	"fmt"
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

// FailedDeliveries implements delivery.RecoverStore with Queries of the
// webhook's delivery log between the window's ids, keeping failed ones.
func (s *Store) FailedDeliveries(ctx context.Context, ws, webhookID string, since, until time.Time, limit int) ([]delivery.Record, error) {
	in := &dynamodb.QueryInput{TableName: &s.Name,
		KeyConditionExpression:   aws.String("pk = :pk AND sk BETWEEN :lo AND :hi"),
		FilterExpression:         aws.String("#st = :failed"),
		ExpressionAttributeNames: map[string]string{"#st": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(deliveryPK(ws, webhookID)),
			":lo": dynamo.Str(deliverySK(idBound(since, false))), ":hi": dynamo.Str(deliverySK(idBound(until, true))), ":failed": dynamo.Str(delivery.StatusFailed)},
		ConsistentRead: aws.Bool(true)}
	var out []delivery.Record
	for {
		page, err := s.Client.Query(ctx, in)
		if err != nil {
			return nil, dynamo.Fail("failed deliveries of "+webhookID, err)
		}
		for _, av := range page.Items {
			var it deliveryItem
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				return nil, chat.Internal(fmt.Errorf("dynamo: delivery of %s: %w", webhookID, err))
			}
			out = append(out, it.record())
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
// UpdateItem: failed, with the attempts the record was read with, becomes
// pending, due at.
func (s *Store) ClaimFailed(ctx context.Context, rec delivery.Record, at time.Time) (bool, error) {
	_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name, Key: dynamo.Key(deliveryPK(rec.WorkspaceID, rec.WebhookID), deliverySK(rec.ID)),
		UpdateExpression:         aws.String("SET #st = :pending, #next = :at"),
		ConditionExpression:      aws.String("#st = :failed AND #a = :n AND attribute_not_exists(#l)"),
		ExpressionAttributeNames: map[string]string{"#st": "status", "#next": attrNextAt, "#a": attrAttempts, "#l": attrLease},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pending": dynamo.Str(delivery.StatusPending), ":failed": dynamo.Str(delivery.StatusFailed),
			":at": dynamo.Str(at.UTC().Format(time.RFC3339Nano)), ":n": dynamo.Num(int64(rec.Attempts))}})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	if err != nil {
		return false, dynamo.Fail("claim failed delivery "+rec.ID, err)
	}
	return true, nil
}

// ReleaseClaim implements delivery.RecoverStore with one UpdateItem,
// unless an attempt of the delivery has started meanwhile.
func (s *Store) ReleaseClaim(ctx context.Context, rec delivery.Record) error {
	_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name, Key: dynamo.Key(deliveryPK(rec.WorkspaceID, rec.WebhookID), deliverySK(rec.ID)),
		UpdateExpression:         aws.String("SET #st = :failed REMOVE #next"),
		ConditionExpression:      aws.String("#st = :pending AND #a = :n AND attribute_not_exists(#l)"),
		ExpressionAttributeNames: map[string]string{"#st": "status", "#next": attrNextAt, "#a": attrAttempts, "#l": attrLease},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pending": dynamo.Str(delivery.StatusPending), ":failed": dynamo.Str(delivery.StatusFailed),
			":n": dynamo.Num(int64(rec.Attempts))}})
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
