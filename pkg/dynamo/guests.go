package dynamo

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
)

// The guest session lookup is the table's own, as the API token lookup
// is (tokens.go): every guest endpoint authenticates its caller with it,
// the guests' edits without the room store.

// GuestSession implements rooms.SessionStore (and realtime's) with one
// BatchGetItem of the session, the room and the room's seats. Errors:
// ENotFound when no session is stored under tokenHash, or when it is a
// session of roomID whose guest's seat names another session (a re-join
// replaced it); EUnavailable when DynamoDB failed after retries; EInternal
// for an item that does not decode.
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
			g := si.Session()
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
		if !chat.HashesEqual(token, chat.SeatToken(tokenHash)) {
			return chat.GuestSession{}, nil, chat.Errorf(chat.ENotFound, "guest session replaced by a re-join")
		}
	}
	return *sess, room, nil
}
