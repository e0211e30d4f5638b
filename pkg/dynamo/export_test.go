package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/chat"
)

// PutRoomForTest writes a room item directly, for tests that need a room
// before the fixture writer exists in their scope.
func (s *Table) PutRoomForTest(ctx context.Context, r chat.Room) error {
	av, err := attributevalue.MarshalMap(RoomItem{PK: RoomPK(r.ID), SK: MetaSK, ID: r.ID, WorkspaceID: r.WorkspaceID,
		ChannelID: r.ChannelID, Name: r.Name, Status: r.Status, ExpiresAt: r.ExpiresAt, ExpiresEpoch: r.ExpiresAt.Unix()})
	if err != nil {
		return err
	}
	_, err = s.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.Name, Item: av})
	return err
}

// SeatsForTest returns the room's seats item's map (nil when absent).
func (s *Table) SeatsForTest(ctx context.Context, roomID string) (map[string]string, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: Key(RoomPK(roomID), SeatsSK)})
	if err != nil || out.Item == nil {
		return nil, err
	}
	var it SeatsItem
	err = attributevalue.UnmarshalMap(out.Item, &it)
	return it.Seats, err
}
