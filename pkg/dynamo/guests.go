package dynamo

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

var _ rooms.SessionStore = (*Store)(nil)

// GuestSession implements rooms.SessionStore with one BatchGetItem of the
// session and the room. Errors: ENotFound when no session is stored under
// tokenHash; EUnavailable when DynamoDB failed after retries; EInternal
// for an item that does not decode.
func (s *Store) GuestSession(ctx context.Context, tokenHash, roomID string) (chat.GuestSession, *chat.Room, error) {
	items, err := s.batchGet(ctx, "get guest session", []map[string]types.AttributeValue{
		key(sessionPK(tokenHash), metaSK),
		key(roomPK(roomID), metaSK),
	})
	if err != nil {
		return chat.GuestSession{}, nil, err
	}
	var sess *chat.GuestSession
	var room *chat.Room
	for _, it := range items {
		switch pk := getS(it, attrPK); {
		case pk == sessionPK(tokenHash):
			var si sessionItem
			if err := attributevalue.UnmarshalMap(it, &si); err != nil {
				return chat.GuestSession{}, nil, chat.Internal(err)
			}
			g := si.session()
			sess = &g
		case pk == roomPK(roomID):
			var ri roomItem
			if err := attributevalue.UnmarshalMap(it, &ri); err != nil {
				return chat.GuestSession{}, nil, chat.Internal(err)
			}
			r := ri.room()
			room = &r
		}
	}
	if sess == nil {
		return chat.GuestSession{}, nil, chat.Errorf(chat.ENotFound, "no such guest session")
	}
	return *sess, room, nil
}

func (it sessionItem) session() chat.GuestSession {
	return chat.GuestSession{
		TokenHash: strings.TrimPrefix(it.PK, sessionPK("")),
		ExpiresAt: it.ExpiresAt,
		Guest: chat.Guest{
			ID: it.GuestID, RoomID: it.RoomID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID,
			Nickname: it.Nickname, PreferredLanguage: it.PreferredLanguage,
		},
	}
}
