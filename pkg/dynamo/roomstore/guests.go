package roomstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/rooms"
)

var (
	_ rooms.SessionStore = (*Store)(nil)
	_ rooms.PostCounter  = (*Store)(nil)
)

// postRatePK is the partition of a guest's post count in one window.
func postRatePK(guestID string, window time.Time) string {
	return "GRATE#" + guestID + "#" + strconv.FormatInt(window.Unix(), 10)
}

// CountPost implements rooms.PostCounter with one UpdateItem: ADD 1 to the
// window's count on condition that it is below limit, so that concurrent
// posts never pass it and a refused post counts nothing. The item lives a
// day past its window (ttl). Errors: EUnavailable when DynamoDB failed
// after retries.
func (s *Store) CountPost(ctx context.Context, guestID string, window time.Time, limit int) (bool, error) {
	_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &s.Name,
		Key:                      dynamo.Key(postRatePK(guestID, window), dynamo.MetaSK),
		UpdateExpression:         aws.String("ADD #c :one SET #ttl = :ttl"),
		ConditionExpression:      aws.String("attribute_not_exists(#c) OR #c < :limit"),
		ExpressionAttributeNames: map[string]string{"#c": "count", "#ttl": dynamo.AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": dynamo.Num(1), ":limit": dynamo.Num(int64(limit)), ":ttl": dynamo.Num(dynamo.Epoch(window.Add(24 * time.Hour))),
		},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	if err != nil {
		return false, dynamo.Fail("count post of "+guestID, err)
	}
	return true, nil
}

// GuestSession implements rooms.SessionStore with one BatchGetItem of the
// session, the room and the room's seats. Errors: ENotFound when no session
// is stored under tokenHash, or when it is a session of roomID whose
// guest's seat names another session (a re-join replaced it);
// EUnavailable when DynamoDB failed after retries; EInternal for an item
// that does not decode.
func (s *Store) GuestSession(ctx context.Context, tokenHash, roomID string) (chat.GuestSession, *chat.Room, error) {
	items, err := s.BatchGet(ctx, "get guest session", []map[string]types.AttributeValue{
		dynamo.Key(dynamo.SessionPK(tokenHash), dynamo.MetaSK),
		dynamo.Key(dynamo.RoomPK(roomID), dynamo.MetaSK),
		dynamo.Key(dynamo.RoomPK(roomID), dynamo.SeatsSK),
	})
	if err != nil {
		return chat.GuestSession{}, nil, err
	}
	var sess *chat.GuestSession
	var room *chat.Room
	var seats map[string]string
	for _, it := range items {
		switch pk := dynamo.GetS(it, dynamo.AttrPK); {
		case pk == dynamo.RoomPK(roomID) && dynamo.GetS(it, dynamo.AttrSK) == dynamo.SeatsSK:
			var si dynamo.SeatsItem
			if err := attributevalue.UnmarshalMap(it, &si); err != nil {
				return chat.GuestSession{}, nil, chat.Internal(err)
			}
			seats = si.Seats
		case pk == dynamo.SessionPK(tokenHash):
			var si dynamo.SessionItem
			if err := attributevalue.UnmarshalMap(it, &si); err != nil {
				return chat.GuestSession{}, nil, chat.Internal(err)
			}
			g := si.Session()
			sess = &g
		case pk == dynamo.RoomPK(roomID):
			var ri dynamo.RoomItem
			if err := attributevalue.UnmarshalMap(it, &ri); err != nil {
				return chat.GuestSession{}, nil, chat.Internal(err)
			}
			r := ri.Room()
			room = &r
		}
	}
	if sess == nil {
		return chat.GuestSession{}, nil, chat.Errorf(chat.ENotFound, "no such guest session")
	}
	// A seat is removed only after its session expired, so a missing seat
	// leaves the decision to the session's own expiry.
	if v, ok := seats[sess.Guest.ID]; ok && sess.Guest.RoomID == roomID {
		_, token, _ := strings.Cut(v, "/")
		if !chat.HashesEqual(token, rooms.SeatToken(tokenHash)) {
			return chat.GuestSession{}, nil, chat.Errorf(chat.ENotFound, "guest session replaced by a re-join")
		}
	}
	return *sess, room, nil
}
