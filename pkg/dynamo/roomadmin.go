package dynamo

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

var _ rooms.RoomStore = (*Table)(nil)

// WsRoomPrefix starts the sort key of a room in its workspace's list.
const WsRoomPrefix = "ROOM#"

func roomRecordOf(r rooms.ManagedRoom) RoomRecord {
	return RoomRecord{RoomItem: RoomItem{PK: RoomPK(r.ID), SK: MetaSK, ID: r.ID, WorkspaceID: r.WorkspaceID, ChannelID: r.ChannelID,
		Name: r.Name, Status: r.Status, ExpiresAt: r.ExpiresAt, ExpiresEpoch: r.ExpiresAt.Unix()}, CreatedAt: r.CreatedAt}
}

func (r RoomRecord) managed() rooms.ManagedRoom {
	return rooms.ManagedRoom{Room: r.Room(), CreatedAt: r.CreatedAt}
}

// CreateRoom implements rooms.RoomStore with one TransactWriteItems: the
// Room's own item (what joins and guest requests read), its item in its
// channel's partition (what the translation function reads to know whose
// guests are readers) and its entry in its workspace's list, the same items
// chatctl apply writes for a temporary_rooms entry.
func (s *Table) CreateRoom(ctx context.Context, r rooms.ManagedRoom) error {
	rec := roomRecordOf(r)
	items := []types.TransactWriteItem{
		Put(s.Name, rec, "attribute_not_exists(pk)", nil),
		Put(s.Name, ChannelRoomItem{PK: ChanPK(r.ChannelID), SK: RoomSK(r.ID), Kind: KindRoom, ID: r.ID,
			Status: r.Status, ExpiresEpoch: rec.ExpiresEpoch}, "", nil),
		Put(s.Name, WsRoomItemOf(rec), "", nil),
	}
	_, err := s.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if reasons := Cancellation(err); reasons != nil && ConditionFailed(reasons, 0) {
		return chat.Errorf(chat.EConflict, "room %s exists", r.ID)
	}
	return Fail("create room "+r.ID, err)
}

// Rooms implements rooms.RoomStore with one Query of the workspace's
// partition, newest first. Errors: EValidation on "cursor"; EUnavailable.
func (s *Table) Rooms(ctx context.Context, ws, after string, limit int) (chat.Page[rooms.ManagedRoom], error) {
	q := ListQuery{Op: "list rooms of workspace " + ws, PK: WsPK(ws), Prefix: WsRoomPrefix}
	return ListPage(ctx, s, q, after, limit, func(it WsRoomItem) rooms.ManagedRoom {
		return rooms.ManagedRoom{Room: chat.Room{ID: it.ID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID,
			Name: it.Name, Status: it.Status, ExpiresAt: it.ExpiresAt}, CreatedAt: it.CreatedAt}
	})
}

// ManagedRoom implements rooms.RoomStore with one strongly consistent
// GetItem. Errors: ENotFound; EUnavailable.
func (s *Table) ManagedRoom(ctx context.Context, roomID string) (rooms.ManagedRoom, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: Key(RoomPK(roomID), MetaSK), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return rooms.ManagedRoom{}, Fail("get room "+roomID, err)
	}
	if out.Item == nil {
		return rooms.ManagedRoom{}, chat.Errorf(chat.ENotFound, "no room %s", roomID)
	}
	var rec RoomRecord
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return rooms.ManagedRoom{}, chat.Internal(err)
	}
	return rec.managed(), nil
}

// CloseRoom implements rooms.RoomStore with one TransactWriteItems that
// sets status "closed" on the room's three items, whatever the number of
// its guests: guest requests and joins read the room's own item, and the
// translation function drops the guests of a room whose channel item is not
// active. A room's entry in its workspace's list is updated only when it
// exists (rooms stored before the list existed have none, until the next
// apply). Errors: ENotFound when the room's item is gone; EUnavailable.
func (s *Table) CloseRoom(ctx context.Context, r rooms.ManagedRoom) error {
	set := func(k map[string]types.AttributeValue) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{
			TableName:                 &s.Name,
			Key:                       k,
			UpdateExpression:          aws.String("SET #st = :closed"),
			ConditionExpression:       aws.String("attribute_exists(pk)"),
			ExpressionAttributeNames:  map[string]string{"#st": "status"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":closed": Str(chat.RoomClosed)},
		}}
	}
	items := []types.TransactWriteItem{
		set(Key(RoomPK(r.ID), MetaSK)),
		set(Key(ChanPK(r.ChannelID), RoomSK(r.ID))),
		set(Key(WsPK(r.WorkspaceID), WsRoomSK(r.CreatedAt, r.ID))),
	}
	op := "close room " + r.ID
	for attempt := 0; ; attempt++ {
		_, err := s.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		reasons := Cancellation(err)
		switch {
		case err == nil:
			return nil
		case reasons == nil:
			return Fail(op, err)
		case ConditionFailed(reasons, 0):
			return chat.Errorf(chat.ENotFound, "no room %s", r.ID)
		case attempt >= 3:
			return chat.Unavailable(errors.New("dynamo: " + op + ": transaction kept being cancelled"))
		}
		// A missing channel or list item (a room stored by an older apply)
		// is left missing rather than created half-empty.
		kept := items[:1:1]
		for i := 1; i < len(items); i++ {
			if !ConditionFailed(reasons, i) {
				kept = append(kept, items[i])
			}
		}
		if len(kept) == len(items) && Conflicted(reasons) {
			select {
			case <-ctx.Done():
				return Fail(op, ctx.Err())
			case <-time.After(time.Duration(20<<attempt) * time.Millisecond):
			}
		}
		items = kept
	}
}
