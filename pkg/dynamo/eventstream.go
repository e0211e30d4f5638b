package dynamo

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
	"github.com/chatbridge/chat/pkg/events"
)

// attrTranslatedAt is set, once, by the translation function when a
// message's every target language is stored: the stream's MODIFY that
// carries it first is message.translated (docs/decisions.md, "Event
// delivery").
const attrTranslatedAt = "translated_at"

// Changes the table's stream reports that become events.
const (
	ChangeMessage    = "message"    // a message stored
	ChangeTranslated = "translated" // a message's translations finished
	ChangeRoom       = "room"       // a room created
	ChangeRoomClosed = "room_closed"
	ChangeGuest      = "guest"   // a guest joined or re-joined
	ChangeEdited     = "edited"  // a message's content edited (a new revision)
	ChangeDeleted    = "deleted" // a message deleted
)

// Change is a stream record that reports an event.
type Change struct {
	Kind         string
	Message      chat.Message
	TranslatedAt time.Time
	Room         chat.Room
	RoomCreated  time.Time
	Guest        chat.Guest
}

// ChangeFromImage reads a stream record's event name and new image, and
// false when it reports no event.
func ChangeFromImage(eventName string, image map[string]types.AttributeValue) (Change, bool) {
	pk, sk := getS(image, attrPK), getS(image, attrSK)
	insert, modify := eventName == "INSERT", eventName == "MODIFY"
	switch {
	case strings.HasPrefix(pk, "CHAN#") && strings.HasPrefix(sk, messagePrefix):
		m, ok := MessageFromImage(image)
		if !ok {
			return Change{}, false
		}
		if insert {
			return Change{Kind: ChangeMessage, Message: m}, true
		}
		switch {
		case modify && OutboxOf(image) == OutboxEdited:
			return Change{Kind: ChangeEdited, Message: m}, true
		case modify && OutboxOf(image) == OutboxDeleted:
			return Change{Kind: ChangeDeleted, Message: m}, true
		}
		at, err := time.Parse(time.RFC3339Nano, getS(image, attrTranslatedAt))
		if modify && err == nil && getS(image, attrPendingShard) == "" {
			return Change{Kind: ChangeTranslated, Message: m, TranslatedAt: at}, true
		}
	case strings.HasPrefix(pk, "ROOM#") && sk == metaSK && (insert || modify):
		var r roomRecord
		if err := attributevalue.UnmarshalMap(image, &r); err != nil || !chat.ValidID(r.ID) {
			return Change{}, false
		}
		if insert {
			return Change{Kind: ChangeRoom, Room: r.room(), RoomCreated: r.CreatedAt}, true
		}
		if r.Status == chat.RoomClosed {
			return Change{Kind: ChangeRoomClosed, Room: r.room(), RoomCreated: r.CreatedAt}, true
		}
	case strings.HasPrefix(pk, "ROOM#") && strings.HasPrefix(sk, "GUEST#") && (insert || modify):
		var g guestItem
		if err := attributevalue.UnmarshalMap(image, &g); err != nil || !chat.ValidID(g.ID) {
			return Change{}, false
		}
		return Change{Kind: ChangeGuest, Guest: chat.Guest{ID: g.ID, RoomID: g.RoomID, WorkspaceID: g.WorkspaceID, ChannelID: g.ChannelID,
			Nickname: g.Nickname, PreferredLanguage: g.PreferredLanguage, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}}, true
	}
	return Change{}, false
}

// EventWebhooks returns a workspace's outbound and support webhooks as
// recipients, with one Query per kind (and page).
func (s *Store) EventWebhooks(ctx context.Context, ws string) ([]events.Webhook, error) {
	var out []events.Webhook
	for _, kind := range []string{events.KindOutbound, events.KindSupport} {
		prefix, _ := webhookPrefix(kind)
		in := &dynamodb.QueryInput{TableName: &s.table, ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :p)"),
			ProjectionExpression:      aws.String("sk, id, active, #ev"),
			ExpressionAttributeNames:  map[string]string{"#ev": "events"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(wsPK(ws)), ":p": str(prefix)}}
		p := dynamodb.NewQueryPaginator(s.db, in)
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fail("event webhooks of "+ws, err)
			}
			for _, it := range page.Items {
				var evs []string
				if l, ok := it["events"]; ok {
					_ = attributevalue.Unmarshal(l, &evs)
				}
				out = append(out, events.Webhook{ID: getS(it, "id"), Kind: kind, Key: getS(it, attrSK), Active: getBool(it, "active"), Events: evs})
			}
		}
	}
	return out, nil
}

// EventRoom returns a room and its creation time with one GetItem.
// Errors: ENotFound.
func (s *Store) EventRoom(ctx context.Context, id string) (chat.Room, time.Time, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: key(roomPK(id), metaSK), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return chat.Room{}, time.Time{}, fail("event room "+id, err)
	}
	if len(out.Item) == 0 {
		return chat.Room{}, time.Time{}, chat.Errorf(chat.ENotFound, "no room %s", id)
	}
	var r roomRecord
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return chat.Room{}, time.Time{}, chat.Internal(fmt.Errorf("dynamo: room %s: %w", id, err))
	}
	return r.room(), r.CreatedAt, nil
}

// GuestRoomID returns the room of a guest who reads channel, from its
// reader item, with one GetItem. Errors: ENotFound.
func (s *Store) GuestRoomID(ctx context.Context, channelID, guestID string) (string, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: key(chanPK(channelID), readerGuestSK(guestID)),
		ProjectionExpression: aws.String("room_id"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", fail("guest room of "+guestID, err)
	}
	id := getS(out.Item, "room_id")
	if id == "" {
		return "", chat.Errorf(chat.ENotFound, "no reader item of guest %s", guestID)
	}
	return id, nil
}

// EventTranslations returns a message's stored translations by target
// language, with one Query (and page).
func (s *Store) EventTranslations(ctx context.Context, messageID string) (map[string]string, error) {
	out := map[string]string{}
	in := &dynamodb.QueryInput{TableName: &s.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :p)"),
		ProjectionExpression:      aws.String("#l, content"),
		ExpressionAttributeNames:  map[string]string{"#l": "language"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(messagePrefix + messageID), ":p": str("TR#")}}
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fail("translations of "+messageID, err)
		}
		for _, it := range page.Items {
			out[getS(it, "language")] = getS(it, "content")
		}
	}
	return out, nil
}
