package roomstore

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/rooms"
)

var _ rooms.RoomStore = (*Store)(nil)

func roomRecordOf(r rooms.ManagedRoom) dynamo.RoomRecord {
	return dynamo.RoomRecord{RoomItem: dynamo.RoomItem{PK: dynamo.RoomPK(r.ID), SK: dynamo.MetaSK, ID: r.ID, WorkspaceID: r.WorkspaceID, ChannelID: r.ChannelID,
		Name: r.Name, Status: r.Status, ExpiresAt: r.ExpiresAt, ExpiresEpoch: r.ExpiresAt.Unix()}, CreatedAt: r.CreatedAt}
}

func managed(r dynamo.RoomRecord) rooms.ManagedRoom {
	return rooms.ManagedRoom{Room: r.Room(), CreatedAt: r.CreatedAt}
}

// CreateRoom implements rooms.RoomStore with one TransactWriteItems: the
// Room's own item (what joins and guest requests read), its item in its
// channel's partition (what the translation function reads to know whose
// guests are readers) and its entry in its workspace's list, the same items
// chatctl apply writes for a temporary_rooms entry.
func (s *Store) CreateRoom(ctx context.Context, r rooms.ManagedRoom) error {
	rec := roomRecordOf(r)
	items := []types.TransactWriteItem{
		dynamo.Put(s.Name, rec, "attribute_not_exists(pk)", nil),
		dynamo.Put(s.Name, dynamo.ChannelRoomItem{PK: dynamo.ChanPK(r.ChannelID), SK: dynamo.RoomSK(r.ID), Kind: dynamo.KindRoom, ID: r.ID,
			Status: r.Status, ExpiresEpoch: rec.ExpiresEpoch}, "", nil),
		dynamo.Put(s.Name, dynamo.WsRoomItemOf(rec), "", nil),
	}
	_, err := s.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if reasons := dynamo.Cancellation(err); reasons != nil && dynamo.ConditionFailed(reasons, 0) {
		return chat.Errorf(chat.EConflict, "room %s exists", r.ID)
	}
	return dynamo.Fail("create room "+r.ID, err)
}

// Rooms implements rooms.RoomStore with one Query of the workspace's
// partition, newest first. Errors: EValidation on "cursor"; EUnavailable.
func (s *Store) Rooms(ctx context.Context, ws, after string, limit int) (chat.Page[rooms.ManagedRoom], error) {
	q := dynamo.ListQuery{Op: "list rooms of workspace " + ws, PK: dynamo.WsPK(ws), Prefix: dynamo.WsRoomPrefix}
	return dynamo.ListPage(ctx, s.Table, q, after, limit, func(it dynamo.WsRoomItem) rooms.ManagedRoom {
		return rooms.ManagedRoom{Room: chat.Room{ID: it.ID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID,
			Name: it.Name, Status: it.Status, ExpiresAt: it.ExpiresAt}, CreatedAt: it.CreatedAt}
	})
}

// ManagedRoom implements rooms.RoomStore with one strongly consistent
// GetItem. Errors: ENotFound; EUnavailable.
func (s *Store) ManagedRoom(ctx context.Context, roomID string) (rooms.ManagedRoom, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: dynamo.Key(dynamo.RoomPK(roomID), dynamo.MetaSK), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return rooms.ManagedRoom{}, dynamo.Fail("get room "+roomID, err)
	}
	if out.Item == nil {
		return rooms.ManagedRoom{}, chat.Errorf(chat.ENotFound, "no room %s", roomID)
	}
	var rec dynamo.RoomRecord
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return rooms.ManagedRoom{}, chat.Internal(err)
	}
	return managed(rec), nil
}

// CloseRoom implements rooms.RoomStore with one TransactWriteItems that
// sets status "closed" on the room's three items, whatever the number of
// its guests: guest requests and joins read the room's own item, and the
// translation function drops the guests of a room whose channel item is not
// active. A room's entry in its workspace's list is updated only when it
// exists (rooms stored before the list existed have none, until the next
// apply). Errors: ENotFound when the room's item is gone; EUnavailable.
func (s *Store) CloseRoom(ctx context.Context, r rooms.ManagedRoom) error {
	set := func(k map[string]types.AttributeValue) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{
			TableName:                 &s.Name,
			Key:                       k,
			UpdateExpression:          aws.String("SET #st = :closed"),
			ConditionExpression:       aws.String("attribute_exists(pk)"),
			ExpressionAttributeNames:  map[string]string{"#st": "status"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":closed": dynamo.Str(chat.RoomClosed)},
		}}
	}
	// The room's own item also records when it closed, to the
	// millisecond: the relay's room.closed is timed (and its id derived)
	// from it, as room.created is from created_at.
	meta := set(dynamo.Key(dynamo.RoomPK(r.ID), dynamo.MetaSK))
	meta.Update.UpdateExpression = aws.String("SET #st = :closed, #ca = if_not_exists(#ca, :at)")
	meta.Update.ExpressionAttributeNames["#ca"] = dynamo.AttrClosedAt
	meta.Update.ExpressionAttributeValues[":at"] = dynamo.Str(time.Now().UTC().Format(time.RFC3339Nano))
	items := []types.TransactWriteItem{
		meta,
		set(dynamo.Key(dynamo.ChanPK(r.ChannelID), dynamo.RoomSK(r.ID))),
		set(dynamo.Key(dynamo.WsPK(r.WorkspaceID), dynamo.WsRoomSK(r.CreatedAt, r.ID))),
	}
	op := "close room " + r.ID
	for attempt := 0; ; attempt++ {
		_, err := s.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		reasons := dynamo.Cancellation(err)
		switch {
		case err == nil:
			return nil
		case reasons == nil:
			return dynamo.Fail(op, err)
		case dynamo.ConditionFailed(reasons, 0):
			return chat.Errorf(chat.ENotFound, "no room %s", r.ID)
		case attempt >= 3:
			return chat.Unavailable(errors.New("dynamo: " + op + ": transaction kept being cancelled"))
		}
		// A missing channel or list item (a room stored by an older apply)
		// is left missing rather than created half-empty.
		kept := items[:1:1]
		for i := 1; i < len(items); i++ {
			if !dynamo.ConditionFailed(reasons, i) {
				kept = append(kept, items[i])
			}
		}
		if len(kept) == len(items) && dynamo.Conflicted(reasons) {
			select {
			case <-ctx.Done():
				return dynamo.Fail(op, ctx.Err())
			case <-time.After(time.Duration(20<<attempt) * time.Millisecond):
			}
		}
		items = kept
	}
}
