package dynamo

import (
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
)

// RoomItem is a Temporary Room: pk ROOM#<id>, sk #META.
type RoomItem struct {
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

// AttrClosedAt is when a room item was closed (RFC 3339, nanoseconds):
// the time of its room.closed event.
const AttrClosedAt = "closed_at"

func (it RoomItem) Room() chat.Room {
	return chat.Room{ID: it.ID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID, Name: it.Name, Status: it.Status, ExpiresAt: it.ExpiresAt}
}

// ChannelRoomItem lists a room in its channel's partition, so that one query
// of the channel finds its readers and which of their rooms are active:
// pk CHAN#<channel>, sk ROOM#<room>.
type ChannelRoomItem struct {
	PK           string `dynamodbav:"pk"`
	SK           string `dynamodbav:"sk"`
	Kind         string `dynamodbav:"kind"`
	ID           string `dynamodbav:"id"`
	Status       string `dynamodbav:"status"`
	ExpiresEpoch int64  `dynamodbav:"expires_epoch"`
}

// ClientItem maps a room's client id to its guest: pk ROOM#<room>,
// sk CLIENT#<lower-case uuid>.
type ClientItem struct {
	PK        string    `dynamodbav:"pk"`
	SK        string    `dynamodbav:"sk"`
	GuestID   string    `dynamodbav:"guest_id"`
	TokenHash string    `dynamodbav:"token_hash"`
	CreatedAt time.Time `dynamodbav:"created_at"`
}

// GuestItem is a guest: pk ROOM#<room>, sk GUEST#<guest>.
type GuestItem struct {
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

// SessionItem is a guest session, found by its token's hash:
// pk GSESSION#<sha256 hex>, sk #META. It carries the guest so that a guest
// request needs one read.
type SessionItem struct {
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

// ReaderItem is one reader of a channel with its language:
// pk CHAN#<channel>, sk READER#USER#<id> or READER#GUEST#<id>.
type ReaderItem struct {
	PK       string `dynamodbav:"pk"`
	SK       string `dynamodbav:"sk"`
	Kind     string `dynamodbav:"kind"`
	ID       string `dynamodbav:"id"`
	Language string `dynamodbav:"language"`
	// RoomID is set for guests: they read while their room is active.
	RoomID string `dynamodbav:"room_id,omitempty"`
	// Token is chat.SeatToken of the reader's current credential (the
	// member's API token, the guest's last join's token): a realtime
	// connection subscribed with another is no longer pushed to.
	Token string `dynamodbav:"token,omitempty"`
	TTL   int64  `dynamodbav:"ttl,omitempty"`
}

// SeatsSK is the sort key of a room's seats item.
const SeatsSK = "SEATS"

// SeatsItem holds a room's seats, one per guest with a session, live or
// expired: pk ROOM#<room>, sk SEATS. Each value is
// "<expiry, unix seconds>/<chat.SeatToken of the session's token hash>".
// At most rooms.MaxLiveSessions entries (every join's condition), so about
// 7 KB at most.
type SeatsItem struct {
	PK    string            `dynamodbav:"pk"`
	SK    string            `dynamodbav:"sk"`
	Seats map[string]string `dynamodbav:"seats"`
	TTL   int64             `dynamodbav:"ttl"`
}

// Put builds a transactional Put of item with an optional condition.
func Put(table string, item any, cond string, values map[string]types.AttributeValue) types.TransactWriteItem {
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

// WsRoomSK orders a workspace's rooms by creation.
func WsRoomSK(created time.Time, id string) string {
	return WsRoomPrefix + SortTime(created) + "#" + id
}

// RoomRecord is the room's own item (roomItem, which joins and guest
// requests read) with its creation time, which locates its entry in the
// workspace's list.
type RoomRecord struct {
	RoomItem
	CreatedAt time.Time `dynamodbav:"created_at"`
}

// WsRoomItem lists a room in its workspace: pk WS#<ws>,
// sk ROOM#<sortTime(created)>#<room>.
type WsRoomItem struct {
	PK          string    `dynamodbav:"pk"`
	SK          string    `dynamodbav:"sk"`
	ID          string    `dynamodbav:"id"`
	WorkspaceID string    `dynamodbav:"workspace_id"`
	ChannelID   string    `dynamodbav:"channel_id"`
	Name        string    `dynamodbav:"name"`
	Status      string    `dynamodbav:"status"`
	ExpiresAt   time.Time `dynamodbav:"expires_at"`
	CreatedAt   time.Time `dynamodbav:"created_at"`
}

func WsRoomItemOf(r RoomRecord) WsRoomItem {
	return WsRoomItem{PK: WsPK(r.WorkspaceID), SK: WsRoomSK(r.CreatedAt, r.ID), ID: r.ID, WorkspaceID: r.WorkspaceID,
		ChannelID: r.ChannelID, Name: r.Name, Status: r.Status, ExpiresAt: r.ExpiresAt, CreatedAt: r.CreatedAt}
}

// WsRoomPrefix starts the sort key of a room in its workspace's list.
const WsRoomPrefix = "ROOM#"

func (it SessionItem) Session() chat.GuestSession {
	return chat.GuestSession{
		TokenHash: strings.TrimPrefix(it.PK, SessionPK("")),
		ExpiresAt: it.ExpiresAt,
		Guest: chat.Guest{
			ID: it.GuestID, RoomID: it.RoomID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID,
			Nickname: it.Nickname, PreferredLanguage: it.PreferredLanguage,
		},
	}
}
