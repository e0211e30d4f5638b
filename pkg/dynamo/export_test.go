package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/chat"
)

// PutRoomForTest writes a room item directly, for tests that need a room
// before the fixture writer exists in their scope.
func (s *Store) PutRoomForTest(ctx context.Context, r chat.Room) error {
	av, err := attributevalue.MarshalMap(roomItem{PK: roomPK(r.ID), SK: metaSK, ID: r.ID, WorkspaceID: r.WorkspaceID,
		ChannelID: r.ChannelID, Name: r.Name, Status: r.Status, ExpiresAt: r.ExpiresAt, ExpiresEpoch: r.ExpiresAt.Unix()})
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: av})
	return err
}

// SeatsForTest returns the room's seats item's map (nil when absent).
func (s *Store) SeatsForTest(ctx context.Context, roomID string) (map[string]string, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: key(roomPK(roomID), seatsSK)})
	if err != nil || out.Item == nil {
		return nil, err
	}
	var it seatsItem
	err = attributevalue.UnmarshalMap(out.Item, &it)
	return it.Seats, err
}
