package dynamo

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
	"github.com/chatbridge/chat/pkg/rooms"
)

var (
	_ rooms.SessionStore = (*Table)(nil)
	_ rooms.PostCounter  = (*Table)(nil)
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
func (s *Table) CountPost(ctx context.Context, guestID string, window time.Time, limit int) (bool, error) {
	_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &s.Name,
		Key:                      Key(postRatePK(guestID, window), MetaSK),
		UpdateExpression:         aws.String("ADD #c :one SET #ttl = :ttl"),
		ConditionExpression:      aws.String("attribute_not_exists(#c) OR #c < :limit"),
		ExpressionAttributeNames: map[string]string{"#c": "count", "#ttl": AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": Num(1), ":limit": Num(int64(limit)), ":ttl": Num(Epoch(window.Add(24 * time.Hour))),
		},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	if err != nil {
		return false, Fail("count post of "+guestID, err)
	}
	return true, nil
}

// GuestSession implements rooms.SessionStore with one BatchGetItem of the
// session, the room and the room's seats. Errors: ENotFound when no session
// is stored under tokenHash, or when it is a session of roomID whose
// guest's seat names another session (a re-join replaced it);
// EUnavailable when DynamoDB failed after retries; EInternal for an item
// that does not decode.
func (s *Table) GuestSession(ctx context.Context, tokenHash, roomID string) (chat.GuestSession, *chat.Room, error) {
	items, err := s.BatchGet(ctx, "get guest session", []map[string]types.AttributeValue{
		Key(SessionPK(tokenHash), MetaSK),
		Key(RoomPK(roomID), MetaSK),
		Key(RoomPK(roomID), SeatsSK),
	})
	if err != nil {
		return chat.GuestSession{}, nil, err
	}
	var sess *chat.GuestSession
	var room *chat.Room
	var seats map[string]string
	for _, it := range items {
		switch pk := GetS(it, AttrPK); {
		case pk == RoomPK(roomID) && GetS(it, AttrSK) == SeatsSK:
			var si SeatsItem
			if err := attributevalue.UnmarshalMap(it, &si); err != nil {
				return chat.GuestSession{}, nil, chat.Internal(err)
			}
			seats = si.Seats
		case pk == SessionPK(tokenHash):
			var si SessionItem
			if err := attributevalue.UnmarshalMap(it, &si); err != nil {
				return chat.GuestSession{}, nil, chat.Internal(err)
			}
			g := si.session()
			sess = &g
		case pk == RoomPK(roomID):
			var ri RoomItem
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

func (it SessionItem) session() chat.GuestSession {
	return chat.GuestSession{
		TokenHash: strings.TrimPrefix(it.PK, SessionPK("")),
		ExpiresAt: it.ExpiresAt,
		Guest: chat.Guest{
			ID: it.GuestID, RoomID: it.RoomID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID,
			Nickname: it.Nickname, PreferredLanguage: it.PreferredLanguage,
		},
	}
}
