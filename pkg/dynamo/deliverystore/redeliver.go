package deliverystore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/events"
)

var _ delivery.RedeliverStore = (*Store)(nil)

// attrRedeliverUntil marks a delivery record's queued redelivery until the
// delivery function takes its attempt number (Reserve removes it), or
// until the time it holds ("SortTime" layout).
const attrRedeliverUntil = "redeliver_until"

// redeliverPK is a webhook's redelivery counter for the window starting at
// window: pk REDELIVER#<ws>#<webhook>#<unix>, sk #META, ttl an hour after.
func redeliverPK(ws, webhook string, window time.Time) string {
	return "REDELIVER#" + ws + "#" + webhook + "#" + strconv.FormatInt(window.Unix(), 10)
}

// EventWebhookOf implements delivery.RedeliverStore (and the delivery
// log's check) with one GetItem of the webhook's by-id item. Errors:
// ENotFound when there is none of kind in workspace ws.
func (s *Store) EventWebhookOf(ctx context.Context, ws, kind, id string) error {
	_, err := s.eventWebhook(ctx, ws, kind, id, "workspace_id, deleted_at")
	return err
}

// EventWebhookActive reports whether webhook id of kind in workspace ws is
// active (the recovery's check), with one GetItem of its by-id item.
// Errors: ENotFound when there is none of kind in ws; EUnavailable.
func (s *Store) EventWebhookActive(ctx context.Context, ws, kind, id string) (bool, error) {
	it, err := s.eventWebhook(ctx, ws, kind, id, "workspace_id, deleted_at, active")
	if err != nil {
		return false, err
	}
	return dynamo.GetBool(it, "active"), nil
}

// EventWebhook returns webhook id of kind in workspace ws as a delivery
// to it sees it (a test delivery's), with one GetItem of its by-id twin.
// Errors: ENotFound when there is none of kind in ws; EUnavailable.
func (s *Store) EventWebhook(ctx context.Context, ws, kind, id string) (delivery.Webhook, error) {
	it, err := s.eventWebhook(ctx, ws, kind, id, "")
	if err != nil {
		return delivery.Webhook{}, err
	}
	created, err := time.Parse(time.RFC3339Nano, dynamo.GetS(it, "created_at"))
	if err != nil {
		return delivery.Webhook{}, chat.Internal(fmt.Errorf("deliverystore: webhook %s: created_at: %w", id, err))
	}
	sk := dynamo.OutboundSK(created, id)
	if kind == events.KindSupport {
		sk = dynamo.SupportSK(created, id)
	}
	return webhookOf(it, kind, ws, sk), nil
}

// eventWebhook reads projection ("" for the whole item) of the by-id item of webhook id of kind,
// if it is one of workspace ws and not deleted.
func (s *Store) eventWebhook(ctx context.Context, ws, kind, id, projection string) (map[string]types.AttributeValue, error) {
	var k map[string]types.AttributeValue
	switch kind {
	case events.KindOutbound:
		k = dynamo.Key(dynamo.OutboundPK(id), dynamo.MetaSK)
	case events.KindSupport:
		k = dynamo.Key(dynamo.SupportPK(id), dynamo.MetaSK)
	default:
		return nil, chat.Errorf(chat.ENotFound, "no %s webhook %s", kind, id)
	}
	in := &dynamodb.GetItemInput{TableName: &s.Name, Key: k, ConsistentRead: aws.Bool(true)}
	if projection != "" {
		in.ProjectionExpression = aws.String(projection)
	}
	out, err := s.Client.GetItem(ctx, in)
	if err != nil {
		return nil, dynamo.Fail("get webhook "+id, err)
	}
	if out.Item == nil || dynamo.GetS(out.Item, "workspace_id") != ws || out.Item["deleted_at"] != nil {
		return nil, chat.Errorf(chat.ENotFound, "no %s webhook %s", kind, id)
	}
	return out.Item, nil
}

// ClaimRedelivery implements delivery.RedeliverStore with one
// TransactWriteItems: the delivery record's pending mark, on condition
// that none is live, and the webhook's counter of the window, on condition
// that it holds fewer than c.Limit. A pending mark takes precedence.
func (s *Store) ClaimRedelivery(ctx context.Context, c delivery.RedeliveryClaim) (delivery.Claim, error) {
	items := []types.TransactWriteItem{
		{Update: &types.Update{TableName: &s.Name, Key: dynamo.Key(deliveryPK(c.WorkspaceID, c.WebhookID), deliverySK(c.DeliveryID)),
			UpdateExpression:                    aws.String("SET #ru = :until"),
			ConditionExpression:                 aws.String("attribute_exists(pk) AND (attribute_not_exists(#ru) OR #ru < :now)"),
			ExpressionAttributeNames:            map[string]string{"#ru": attrRedeliverUntil},
			ExpressionAttributeValues:           map[string]types.AttributeValue{":until": dynamo.Str(dynamo.SortTime(c.Until)), ":now": dynamo.Str(dynamo.SortTime(c.Now))},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		{Update: &types.Update{TableName: &s.Name, Key: dynamo.Key(redeliverPK(c.WorkspaceID, c.WebhookID, c.Window), dynamo.MetaSK),
			UpdateExpression:         aws.String("ADD #n :one SET #ttl = if_not_exists(#ttl, :ttl)"),
			ConditionExpression:      aws.String("attribute_not_exists(#n) OR #n < :limit"),
			ExpressionAttributeNames: map[string]string{"#n": "count", "#ttl": dynamo.AttrTTL},
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": dynamo.Num(1), ":limit": dynamo.Num(int64(c.Limit)),
				":ttl": dynamo.Num(dynamo.Epoch(c.Window.Add(time.Hour)))}}},
	}
	reasons, err := s.Transact(ctx, "claim redelivery of "+c.DeliveryID, items)
	switch {
	case chat.IsCode(err, chat.EConflict):
		// Concurrent claims collided until the retries ran out: when one of
		// them holds the delivery now, this one is the second (409); a
		// collision on the counter alone is worth a retry later (503).
		if pending, gerr := s.redeliveryHeld(ctx, c); gerr == nil && pending {
			return delivery.ClaimPending, nil
		}
		return 0, chat.Unavailable(err)
	case err != nil:
		return 0, err
	case reasons == nil:
		return delivery.Claimed, nil
	case dynamo.ConditionFailed(reasons, 0):
		if len(reasons[0].Item) == 0 {
			return 0, chat.Errorf(chat.ENotFound, "no delivery %s", c.DeliveryID)
		}
		return delivery.ClaimPending, nil
	case dynamo.ConditionFailed(reasons, 1):
		return delivery.ClaimLimited, nil
	}
	return 0, chat.Internal(fmt.Errorf("dynamo: claim redelivery cancelled for an unexpected reason: %s", dynamo.ReasonCodes(reasons)))
}

// ReleaseRedelivery implements delivery.RedeliverStore with one UpdateItem.
func (s *Store) ReleaseRedelivery(ctx context.Context, ws, webhookID, id string) error {
	_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name, Key: dynamo.Key(deliveryPK(ws, webhookID), deliverySK(id)),
		UpdateExpression: aws.String("REMOVE #ru"), ConditionExpression: aws.String("attribute_exists(pk)"),
		ExpressionAttributeNames: map[string]string{"#ru": attrRedeliverUntil}})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil
	}
	return dynamo.Fail("release redelivery of "+id, err)
}

// redeliveryHeld reports whether a redelivery of c's delivery is pending
// (its mark is set and not lapsed), with one consistent GetItem.
func (s *Store) redeliveryHeld(ctx context.Context, c delivery.RedeliveryClaim) (bool, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, ConsistentRead: aws.Bool(true),
		Key:                      dynamo.Key(deliveryPK(c.WorkspaceID, c.WebhookID), deliverySK(c.DeliveryID)),
		ProjectionExpression:     aws.String("#ru"),
		ExpressionAttributeNames: map[string]string{"#ru": attrRedeliverUntil}})
	if err != nil {
		return false, dynamo.Fail("read redelivery mark of "+c.DeliveryID, err)
	}
	until := dynamo.GetS(out.Item, attrRedeliverUntil)
	return until != "" && until >= dynamo.SortTime(c.Now), nil
}
