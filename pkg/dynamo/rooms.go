package dynamo

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

var _ rooms.JoinStore = (*Store)(nil)

// roomItem is a Temporary Room: pk ROOM#<id>, sk #META.
type roomItem struct {
	PK           string    `dynamodbav:"pk"`
	SK           string    `dynamodbav:"sk"`
	ID           string    `dynamodbav:"id"`
	WorkspaceID  string    `dynamodbav:"workspace_id"`
	ChannelID    string    `dynamodbav:"channel_id"`
	Name         string    `dynamodbav:"name"`
	Status       string    `dynamodbav:"status"`
	ExpiresAt    time.Time `dynamodbav:"expires_at"`
	ExpiresEpoch int64     `dynamodbav:"expires_epoch"`
}

func (it roomItem) room() chat.Room {
	return chat.Room{ID: it.ID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID, Name: it.Name, Status: it.Status, ExpiresAt: it.ExpiresAt}
}

// channelRoomItem lists a room in its channel's partition, so that one query
// of the channel finds its readers and which of their rooms are active:
// pk CHAN#<channel>, sk ROOM#<room>.
type channelRoomItem struct {
	PK           string `dynamodbav:"pk"`
	SK           string `dynamodbav:"sk"`
	Kind         string `dynamodbav:"kind"`
	ID           string `dynamodbav:"id"`
	Status       string `dynamodbav:"status"`
	ExpiresEpoch int64  `dynamodbav:"expires_epoch"`
}

// clientItem maps a room's client id to its guest: pk ROOM#<room>,
// sk CLIENT#<lower-case uuid>.
type clientItem struct {
	PK        string    `dynamodbav:"pk"`
	SK        string    `dynamodbav:"sk"`
	GuestID   string    `dynamodbav:"guest_id"`
	TokenHash string    `dynamodbav:"token_hash"`
	CreatedAt time.Time `dynamodbav:"created_at"`
}

// guestItem is a guest: pk ROOM#<room>, sk GUEST#<guest>.
type guestItem struct {
	PK                string    `dynamodbav:"pk"`
	SK                string    `dynamodbav:"sk"`
	ID                string    `dynamodbav:"id"`
	RoomID            string    `dynamodbav:"room_id"`
	WorkspaceID       string    `dynamodbav:"workspace_id"`
	ChannelID         string    `dynamodbav:"channel_id"`
	Nickname          string    `dynamodbav:"nickname"`
	PreferredLanguage string    `dynamodbav:"preferred_language"`
	ClientID          string    `dynamodbav:"client_id,omitempty"`
	TokenHash         string    `dynamodbav:"token_hash"`
	SessionExpiresAt  time.Time `dynamodbav:"session_expires_at"`
	CreatedAt         time.Time `dynamodbav:"created_at"`
	UpdatedAt         time.Time `dynamodbav:"updated_at"`
}

// sessionItem is a guest session, found by its token's hash:
// pk GSESSION#<sha256 hex>, sk #META. It carries the guest so that a guest
// request needs one read.
type sessionItem struct {
	PK                string    `dynamodbav:"pk"`
	SK                string    `dynamodbav:"sk"`
	GuestID           string    `dynamodbav:"guest_id"`
	RoomID            string    `dynamodbav:"room_id"`
	WorkspaceID       string    `dynamodbav:"workspace_id"`
	ChannelID         string    `dynamodbav:"channel_id"`
	Nickname          string    `dynamodbav:"nickname"`
	PreferredLanguage string    `dynamodbav:"preferred_language"`
	ExpiresAt         time.Time `dynamodbav:"expires_at"`
	TTL               int64     `dynamodbav:"ttl"`
}

// readerItem is one reader of a channel with its language:
// pk CHAN#<channel>, sk READER#USER#<id> or READER#GUEST#<id>.
type readerItem struct {
	PK       string `dynamodbav:"pk"`
	SK       string `dynamodbav:"sk"`
	Kind     string `dynamodbav:"kind"`
	ID       string `dynamodbav:"id"`
	Language string `dynamodbav:"language"`
	// RoomID is set for guests: they read while their room is active.
	RoomID string `dynamodbav:"room_id,omitempty"`
	TTL    int64  `dynamodbav:"ttl,omitempty"`
}

// LoadJoin implements rooms.JoinStore with one GetItem, or one BatchGetItem
// when a client id is given.
func (s *Store) LoadJoin(ctx context.Context, roomID, clientKey string) (chat.Room, *rooms.PriorGuest, error) {
	keys := []map[string]types.AttributeValue{key(roomPK(roomID), metaSK)}
	if clientKey != "" {
		keys = append(keys, key(roomPK(roomID), clientSK(clientKey)))
	}
	var items []map[string]types.AttributeValue
	if len(keys) == 1 {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: keys[0], ConsistentRead: aws.Bool(true)})
		if err != nil {
			return chat.Room{}, nil, fail("get room "+roomID, err)
		}
		if out.Item != nil {
			items = append(items, out.Item)
		}
	} else {
		var err error
		if items, err = s.batchGet(ctx, "load join "+roomID, keys); err != nil {
			return chat.Room{}, nil, err
		}
	}
	var room *chat.Room
	var prior *rooms.PriorGuest
	for _, it := range items {
		switch getS(it, attrSK) {
		case metaSK:
			var ri roomItem
			if err := attributevalue.UnmarshalMap(it, &ri); err != nil {
				return chat.Room{}, nil, chat.Internal(err)
			}
			r := ri.room()
			room = &r
		default:
			var ci clientItem
			if err := attributevalue.UnmarshalMap(it, &ci); err != nil {
				return chat.Room{}, nil, chat.Internal(err)
			}
			prior = &rooms.PriorGuest{GuestID: ci.GuestID, TokenHash: ci.TokenHash, CreatedAt: ci.CreatedAt}
		}
	}
	if room == nil {
		return chat.Room{}, nil, rooms.ErrUnavailable()
	}
	return *room, prior, nil
}

// CommitJoin implements rooms.JoinStore with one TransactWriteItems.
func (s *Store) CommitJoin(ctx context.Context, j rooms.Join) error {
	g := j.Guest
	now := g.UpdatedAt
	roomKey := key(roomPK(j.Room.ID), metaSK)
	items := []types.TransactWriteItem{{
		ConditionCheck: &types.ConditionCheck{
			TableName:                 &s.table,
			Key:                       roomKey,
			ConditionExpression:       aws.String("#st = :active AND expires_epoch > :now"),
			ExpressionAttributeNames:  map[string]string{"#st": "status"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":active": str(chat.RoomActive), ":now": num(now.Unix())},
		},
	}}
	guest := guestItem{
		PK: roomPK(g.RoomID), SK: guestSK(g.ID), ID: g.ID, RoomID: g.RoomID, WorkspaceID: g.WorkspaceID,
		ChannelID: g.ChannelID, Nickname: g.Nickname, PreferredLanguage: g.PreferredLanguage,
		ClientID: g.ClientID, TokenHash: j.TokenHash, SessionExpiresAt: j.SessionExpires,
		CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt,
	}
	items = append(items, put(s.table, guest, "", nil))
	const clientIdx = 2
	if g.ClientID != "" {
		ci := clientItem{PK: roomPK(g.RoomID), SK: clientSK(g.ClientID), GuestID: g.ID, TokenHash: j.TokenHash, CreatedAt: g.CreatedAt}
		if j.Prior == nil {
			items = append(items, put(s.table, ci, "attribute_not_exists(pk)", nil))
		} else {
			items = append(items, put(s.table, ci, "token_hash = :old", map[string]types.AttributeValue{":old": str(j.Prior.TokenHash)}))
			items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: &s.table, Key: key(sessionPK(j.Prior.TokenHash), metaSK)}})
		}
	}
	sess := sessionItem{
		PK: sessionPK(j.TokenHash), SK: metaSK, GuestID: g.ID, RoomID: g.RoomID, WorkspaceID: g.WorkspaceID,
		ChannelID: g.ChannelID, Nickname: g.Nickname, PreferredLanguage: g.PreferredLanguage,
		ExpiresAt: j.SessionExpires, TTL: epoch(j.SessionExpires),
	}
	items = append(items, put(s.table, sess, "attribute_not_exists(pk)", nil))
	reader := readerItem{
		PK: chanPK(g.ChannelID), SK: readerGuestSK(g.ID), Kind: chat.AuthorGuest, ID: g.ID,
		Language: g.PreferredLanguage, RoomID: g.RoomID, TTL: epoch(j.Room.ExpiresAt.Add(24 * time.Hour)),
	}
	items = append(items, put(s.table, reader, "", nil))

	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return nil
	}
	if reasons := cancellation(err); reasons != nil {
		switch {
		case conditionFailed(reasons, 0):
			return rooms.ErrUnavailable()
		case g.ClientID != "" && conditionFailed(reasons, clientIdx):
			return chat.Errorf(chat.EConflict, "a concurrent join with this client id won")
		case conflicted(reasons):
			return chat.Errorf(chat.EConflict, "join collided with another transaction")
		}
	}
	return fail("commit join "+g.ID, err)
}

// put builds a transactional Put of item with an optional condition.
func put(table string, item any, cond string, values map[string]types.AttributeValue) types.TransactWriteItem {
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		// Items are our own structs of strings, numbers and times: a
		// marshal failure is a programming error.
		panic("dynamo: marshal " + err.Error())
	}
	p := &types.Put{TableName: aws.String(table), Item: av}
	if cond != "" {
		p.ConditionExpression = aws.String(cond)
		p.ExpressionAttributeValues = values
	}
	return types.TransactWriteItem{Put: p}
}
