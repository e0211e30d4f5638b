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

// Changes the table's stream reports that become events.
const (
	ChangeMessage    = "message"    // a message stored
	ChangeTranslated = "translated" // a message's translations finished
	ChangeRoom       = "room"       // a room created
	ChangeRoomClosed = "room_closed"
	ChangeGuest      = "guest" // a guest joined or re-joined
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
	pk, sk := GetS(image, AttrPK), GetS(image, AttrSK)
	insert, modify := eventName == "INSERT", eventName == "MODIFY"
	switch {
	case strings.HasPrefix(pk, "CHAN#") && strings.HasPrefix(sk, MessagePrefix):
		m, ok := MessageFromImage(image)
		if !ok {
			return Change{}, false
		}
		if insert {
			return Change{Kind: ChangeMessage, Message: m}, true
		}
		at, err := time.Parse(time.RFC3339Nano, GetS(image, AttrTranslatedAt))
		if modify && err == nil && GetS(image, AttrPendingShard) == "" {
			return Change{Kind: ChangeTranslated, Message: m, TranslatedAt: at}, true
		}
	case strings.HasPrefix(pk, "ROOM#") && sk == MetaSK && (insert || modify):
		var r RoomRecord
		if err := attributevalue.UnmarshalMap(image, &r); err != nil || !chat.ValidID(r.ID) {
			return Change{}, false
		}
		if insert {
			return Change{Kind: ChangeRoom, Room: r.Room(), RoomCreated: r.CreatedAt}, true
		}
		if r.Status == chat.RoomClosed {
			return Change{Kind: ChangeRoomClosed, Room: r.Room(), RoomCreated: r.CreatedAt}, true
		}
	case strings.HasPrefix(pk, "ROOM#") && strings.HasPrefix(sk, "GUEST#") && (insert || modify):
		var g GuestItem
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
func (s *Table) EventWebhooks(ctx context.Context, ws string) ([]events.Webhook, error) {
	var out []events.Webhook
	for _, kind := range []string{events.KindOutbound, events.KindSupport} {
		prefix, _ := webhookPrefix(kind)
		in := &dynamodb.QueryInput{TableName: &s.Name, ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :p)"),
			ProjectionExpression:      aws.String("sk, id, active, #ev"),
			ExpressionAttributeNames:  map[string]string{"#ev": "events"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": Str(WsPK(ws)), ":p": Str(prefix)}}
		p := dynamodb.NewQueryPaginator(s.Client, in)
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, Fail("event webhooks of "+ws, err)
			}
			for _, it := range page.Items {
				var evs []string
				if l, ok := it["events"]; ok {
					_ = attributevalue.Unmarshal(l, &evs)
				}
				out = append(out, events.Webhook{ID: GetS(it, "id"), Kind: kind, Key: GetS(it, AttrSK), Active: getBool(it, "active"), Events: evs})
			}
		}
	}
	return out, nil
}

// EventRoom returns a room and its creation time with one GetItem.
// Errors: ENotFound.
func (s *Table) EventRoom(ctx context.Context, id string) (chat.Room, time.Time, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: Key(RoomPK(id), MetaSK), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return chat.Room{}, time.Time{}, Fail("event room "+id, err)
	}
	if len(out.Item) == 0 {
		return chat.Room{}, time.Time{}, chat.Errorf(chat.ENotFound, "no room %s", id)
	}
	var r RoomRecord
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return chat.Room{}, time.Time{}, chat.Internal(fmt.Errorf("dynamo: room %s: %w", id, err))
	}
	return r.Room(), r.CreatedAt, nil
}

// GuestRoomID returns the room of a guest who reads channel, from its
// reader item, with one GetItem. Errors: ENotFound.
func (s *Table) GuestRoomID(ctx context.Context, channelID, guestID string) (string, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: Key(ChanPK(channelID), ReaderGuestSK(guestID)),
		ProjectionExpression: aws.String("room_id"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", Fail("guest room of "+guestID, err)
	}
	id := GetS(out.Item, "room_id")
	if id == "" {
		return "", chat.Errorf(chat.ENotFound, "no reader item of guest %s", guestID)
	}
	return id, nil
}

// EventTranslations returns a message's stored translations by target
// language, with one Query (and page).
func (s *Table) EventTranslations(ctx context.Context, messageID string) (map[string]string, error) {
	out := map[string]string{}
	in := &dynamodb.QueryInput{TableName: &s.Name, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :p)"),
		ProjectionExpression:      aws.String("#l, content"),
		ExpressionAttributeNames:  map[string]string{"#l": "language"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": Str(MessagePrefix + messageID), ":p": Str("TR#")}}
	p := dynamodb.NewQueryPaginator(s.Client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, Fail("translations of "+messageID, err)
		}
		for _, it := range page.Items {
			out[GetS(it, "language")] = GetS(it, "content")
		}
	}
	return out, nil
}
