package dynamo

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
	"github.com/chatbridge/chat/pkg/webhooks"
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
	in := &dynamodb.QueryInput{TableName: &s.table,
		KeyConditionExpression:   aws.String("pk = :pk AND sk BETWEEN :lo AND :hi"),
		FilterExpression:         aws.String("#st = :failed"),
		ExpressionAttributeNames: map[string]string{"#st": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(deliveryPK(ws, webhookID)),
			":lo": str(deliverySK(idBound(since, false))), ":hi": str(deliverySK(idBound(until, true))), ":failed": str(delivery.StatusFailed)},
		ConsistentRead: aws.Bool(true)}
	var out []delivery.Record
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fail("failed deliveries of "+webhookID, err)
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
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.table, Key: key(deliveryPK(rec.WorkspaceID, rec.WebhookID), deliverySK(rec.ID)),
		UpdateExpression:         aws.String("SET #st = :pending, #next = :at"),
		ConditionExpression:      aws.String("#st = :failed AND #a = :n AND attribute_not_exists(#l)"),
		ExpressionAttributeNames: map[string]string{"#st": "status", "#next": attrNextAt, "#a": attrAttempts, "#l": attrLease},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pending": str(delivery.StatusPending), ":failed": str(delivery.StatusFailed),
			":at": str(at.UTC().Format(time.RFC3339Nano)), ":n": num(int64(rec.Attempts))}})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	if err != nil {
		return false, fail("claim failed delivery "+rec.ID, err)
	}
	return true, nil
}

// ReleaseClaim implements delivery.RecoverStore with one UpdateItem,
// unless an attempt of the delivery has started meanwhile.
func (s *Store) ReleaseClaim(ctx context.Context, rec delivery.Record) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.table, Key: key(deliveryPK(rec.WorkspaceID, rec.WebhookID), deliverySK(rec.ID)),
		UpdateExpression:         aws.String("SET #st = :failed REMOVE #next"),
		ConditionExpression:      aws.String("#st = :pending AND #a = :n AND attribute_not_exists(#l)"),
		ExpressionAttributeNames: map[string]string{"#st": "status", "#next": attrNextAt, "#a": attrAttempts, "#l": attrLease},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pending": str(delivery.StatusPending), ":failed": str(delivery.StatusFailed),
			":n": num(int64(rec.Attempts))}})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil
	}
	return fail("release delivery "+rec.ID, err)
}

// PutTestDelivery implements delivery.TestLog with one PutItem: the test
// delivery's record, its one attempt made.
func (s *Store) PutTestDelivery(ctx context.Context, a delivery.Attempt) error {
	d := a.Delivery
	it := deliveryItem{PK: deliveryPK(d.WorkspaceID, d.WebhookID), SK: deliverySK(d.ID), ID: d.ID, WebhookID: d.WebhookID, Kind: d.Kind,
		WorkspaceID: d.WorkspaceID, WebhookKey: d.WebhookKey, EventID: d.EventID, EventType: d.EventType, Status: a.Status,
		Attempts: a.Number, LastAttemptAt: a.At.UTC(), ResponseStatus: a.ResponseStatus, Error: a.Error, DurationMS: a.DurationMS,
		CreatedAt: a.At.UTC()}
	av := marshalItem(it, nil)
	av["ttl"] = num(epoch(a.At.Add(delivery.Retention)))
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: av})
	return fail("put test delivery "+d.ID, err)
}

// ListedWebhookKey is the sort key of w's listed twin, which deliveries
// name their webhook by (events.Delivery.WebhookKey).
func ListedWebhookKey(w webhooks.Webhook) string {
	return listedKey(w)["sk"].(*types.AttributeValueMemberS).Value
}
