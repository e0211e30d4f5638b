package relaystore

import (
	"context"
	"fmt"
	"strings"
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

// EventTranslations returns a message's stored translations (content and
// alt texts) by target language, with one Query (and page).
func (s *Store) EventTranslations(ctx context.Context, messageID string) (map[string]chat.Translation, error) {
	out := map[string]chat.Translation{}
	in := &dynamodb.QueryInput{TableName: &s.Name, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :p)"),
		ProjectionExpression:      aws.String("#l, content, alt_texts"),
		ExpressionAttributeNames:  map[string]string{"#l": "language"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(dynamo.MessagePrefix + messageID), ":p": dynamo.Str("TR#")}}
	p := dynamodb.NewQueryPaginator(s.Client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, dynamo.Fail("translations of "+messageID, err)
		}
		for _, av := range page.Items {
			var it dynamo.TranslationItem
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				return nil, chat.Internal(fmt.Errorf("dynamo: translations of %s: %w", messageID, err))
			}
			tr := it.Translation()
			tr.MessageID = messageID // not projected: the key says it
			out[it.Language] = tr
		}
	}
	return out, nil
}

// PutEvents stores events' envelopes for redelivery, 25 items per
// BatchWriteItem: each envelope (EVENT#<event> / #META) and, for an event
// that carries a message, a record of it under the message (MSG#<message>
// / EVENT#<event>, beside its translations), by which ScrubMessageEvents
// finds the message's envelopes.
func (s *Store) PutEvents(ctx context.Context, evs []events.Event, bodies [][]byte) error {
	var reqs []types.WriteRequest
	for i, ev := range evs {
		ttl := dynamo.Epoch(ev.CreatedAt.Add(chat.DeliveryRetention))
		av, err := attributevalue.MarshalMap(dynamo.EventItem{PK: dynamo.EventPK(ev.ID), SK: dynamo.MetaSK, ID: ev.ID, WorkspaceID: ev.WorkspaceID,
			Type: ev.Type, Body: string(bodies[i]), TTL: ttl})
		if err != nil {
			return chat.Internal(err)
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
		if ref, ok := ev.MessageOf(); ok {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
				dynamo.AttrPK: dynamo.Str(messageEventsPK(ref.ID)), dynamo.AttrSK: dynamo.Str(dynamo.EventPK(ev.ID)),
				"event_id": dynamo.Str(ev.ID), dynamo.AttrTTL: dynamo.Num(ttl)}}})
		}
	}
	if len(reqs) == 0 {
		return nil
	}
	return s.BatchWrite(ctx, "put events", reqs)
}

// messageEventsPK is the partition of a message's records of its events:
// the message's own, which also holds its translations (TR#...).
func messageEventsPK(messageID string) string { return dynamo.TranslationPK(messageID) }

// DeletedMessages implements relay.EventStore with one strongly consistent
// BatchGetItem per 100 messages (more for unprocessed keys), projecting
// deleted_at. A message not stored is not deleted. Errors: EUnavailable.
func (s *Store) DeletedMessages(ctx context.Context, refs []events.MessageRef) (map[string]time.Time, error) {
	var keys []map[string]types.AttributeValue
	seen := map[string]bool{}
	for _, r := range refs {
		if !seen[r.ID] {
			seen[r.ID] = true
			keys = append(keys, dynamo.Key(dynamo.ChanPK(r.ChannelID), dynamo.MessageSK(r.ID)))
		}
	}
	out := map[string]time.Time{}
	for start := 0; start < len(keys); start += dynamo.MaxBatchGet {
		items, err := s.BatchGetProjected(ctx, "deleted messages", keys[start:min(start+dynamo.MaxBatchGet, len(keys))], "#sk, #d",
			map[string]string{"#sk": dynamo.AttrSK, "#d": dynamo.AttrDeletedAt})
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			v := dynamo.GetS(it, dynamo.AttrDeletedAt)
			if v == "" {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				at = time.Unix(0, 0).UTC() // deleted, when unreadable: gone is what matters
			}
			out[strings.TrimPrefix(dynamo.GetS(it, dynamo.AttrSK), dynamo.MessagePrefix)] = at
		}
	}
	return out, nil
}

// ScrubMessageEvents implements relay.EventStore: one Query of the
// message's records of its events, one BatchGetItem of their envelopes and
// those of ids (per 100), and the scrubbed envelopes put back with
// BatchWriteItem (per 25); an envelope already scrubbed, of another
// message, or expired, is left. Errors: EUnavailable; EInternal for an
// envelope that is not one.
func (s *Store) ScrubMessageEvents(ctx context.Context, messageID string, deletedAt time.Time, ids ...string) error {
	op := "scrub the events of message " + messageID
	recs, err := s.QueryAll(ctx, op, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :ev)"),
		ProjectionExpression:      aws.String("event_id"),
		ExpressionAttributeNames:  map[string]string{"#pk": dynamo.AttrPK, "#sk": dynamo.AttrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(messageEventsPK(messageID)), ":ev": dynamo.Str(dynamo.EventPrefix)},
	})
	if err != nil {
		return err
	}
	var keys []map[string]types.AttributeValue
	seen := map[string]bool{}
	for _, r := range recs {
		ids = append(ids, dynamo.GetS(r, "event_id"))
	}
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			keys = append(keys, dynamo.Key(dynamo.EventPK(id), dynamo.MetaSK))
		}
	}
	var puts []types.WriteRequest
	for start := 0; start < len(keys); start += dynamo.MaxBatchGet {
		items, err := s.BatchGet(ctx, op, keys[start:min(start+dynamo.MaxBatchGet, len(keys))])
		if err != nil {
			return err
		}
		for _, it := range items {
			body := dynamo.GetS(it, "body")
			if ref, ok := events.MessageRefOf([]byte(body)); !ok || ref.Deleted || ref.ID != messageID {
				continue
			}
			scrubbed, err := events.Scrub([]byte(body), deletedAt)
			if err != nil {
				return chat.Internal(fmt.Errorf("dynamo: %s: %w", op, err))
			}
			it["body"] = dynamo.Str(string(scrubbed))
			puts = append(puts, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
	}
	if len(puts) == 0 {
		return nil
	}
	return s.BatchWrite(ctx, op, puts)
}
