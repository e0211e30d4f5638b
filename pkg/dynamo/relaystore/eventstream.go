package relaystore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/events"
)

// EventWebhooks returns a workspace's outbound and support webhooks as
// recipients, with one Query per kind (and page).
func (s *Store) EventWebhooks(ctx context.Context, ws string) ([]events.Webhook, error) {
	var out []events.Webhook
	for _, kind := range []string{events.KindOutbound, events.KindSupport} {
		prefix, _ := dynamo.WebhookPrefix(kind)
		in := &dynamodb.QueryInput{TableName: &s.Name, ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :p)"),
			ProjectionExpression:      aws.String("sk, id, active, #ev"),
			ExpressionAttributeNames:  map[string]string{"#ev": "events"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(dynamo.WsPK(ws)), ":p": dynamo.Str(prefix)}}
		p := dynamodb.NewQueryPaginator(s.Client, in)
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, dynamo.Fail("event webhooks of "+ws, err)
			}
			for _, it := range page.Items {
				var evs []string
				if l, ok := it["events"]; ok {
					_ = attributevalue.Unmarshal(l, &evs)
				}
				out = append(out, events.Webhook{ID: dynamo.GetS(it, "id"), Kind: kind, Key: dynamo.GetS(it, dynamo.AttrSK), Active: dynamo.GetBool(it, "active"), Events: evs})
			}
		}
	}
	return out, nil
}

// EventRoom returns a room and its creation time with one GetItem.
// Errors: ENotFound.
func (s *Store) EventRoom(ctx context.Context, id string) (chat.Room, time.Time, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: dynamo.Key(dynamo.RoomPK(id), dynamo.MetaSK), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return chat.Room{}, time.Time{}, dynamo.Fail("event room "+id, err)
	}
	if len(out.Item) == 0 {
		return chat.Room{}, time.Time{}, chat.Errorf(chat.ENotFound, "no room %s", id)
	}
	var r dynamo.RoomRecord
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return chat.Room{}, time.Time{}, chat.Internal(fmt.Errorf("dynamo: room %s: %w", id, err))
	}
	return r.Room(), r.CreatedAt, nil
}

// GuestRoomID returns the room of a guest who reads channel, from its
// reader item, with one GetItem. Errors: ENotFound.
func (s *Store) GuestRoomID(ctx context.Context, channelID, guestID string) (string, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: dynamo.Key(dynamo.ChanPK(channelID), dynamo.ReaderGuestSK(guestID)),
		ProjectionExpression: aws.String("room_id"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", dynamo.Fail("guest room of "+guestID, err)
	}
	id := dynamo.GetS(out.Item, "room_id")
	if id == "" {
		return "", chat.Errorf(chat.ENotFound, "no reader item of guest %s", guestID)
	}
	return id, nil
}

// EventTranslations returns a message's stored translations by target
// language, with one Query (and page).
func (s *Store) EventTranslations(ctx context.Context, messageID string) (map[string]string, error) {
	out := map[string]string{}
	in := &dynamodb.QueryInput{TableName: &s.Name, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :p)"),
		ProjectionExpression:      aws.String("#l, content"),
		ExpressionAttributeNames:  map[string]string{"#l": "language"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(dynamo.MessagePrefix + messageID), ":p": dynamo.Str("TR#")}}
	p := dynamodb.NewQueryPaginator(s.Client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, dynamo.Fail("translations of "+messageID, err)
		}
		for _, it := range page.Items {
			out[dynamo.GetS(it, "language")] = dynamo.GetS(it, "content")
		}
	}
	return out, nil
}

// PutEvents stores events' envelopes for redelivery, 25 per
// BatchWriteItem.
func (s *Store) PutEvents(ctx context.Context, evs []events.Event, bodies [][]byte) error {
	var reqs []types.WriteRequest
	for i, ev := range evs {
		av, err := attributevalue.MarshalMap(dynamo.EventItem{PK: dynamo.EventPK(ev.ID), SK: dynamo.MetaSK, ID: ev.ID, WorkspaceID: ev.WorkspaceID,
			Type: ev.Type, Body: string(bodies[i]), TTL: dynamo.Epoch(ev.CreatedAt.Add(chat.DeliveryRetention))})
		if err != nil {
			return chat.Internal(err)
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
	}
	if len(reqs) == 0 {
		return nil
	}
	return s.BatchWrite(ctx, "put events", reqs)
}
