package roomstore

import (
	"context"
	"math"
	"slices"
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

var _ rooms.JoinStore = (*Store)(nil)

func seatValue(s rooms.Seat) string {
	return strconv.FormatInt(s.ExpiresAt.Unix(), 10) + "/" + s.Token
}

// seatsOf decodes a seats item's map; an entry that does not decode counts
// as a live seat without a session, so that it is never given away.
func seatsOf(m map[string]string) map[string]rooms.Seat {
	out := make(map[string]rooms.Seat, len(m))
	for id, v := range m {
		exp, token, _ := strings.Cut(v, "/")
		sec, err := strconv.ParseInt(exp, 10, 64)
		if err != nil {
			sec = math.MaxInt32
		}
		out[id] = rooms.Seat{GuestID: id, Token: token, ExpiresAt: time.Unix(sec, 0).UTC()}
	}
	return out
}

// LoadJoin implements rooms.JoinStore with one BatchGetItem of the room,
// its seats and, when clientKey is given, the client id's item.
func (s *Store) LoadJoin(ctx context.Context, roomID, clientKey string) (rooms.JoinState, error) {
	keys := []map[string]types.AttributeValue{dynamo.Key(dynamo.RoomPK(roomID), dynamo.MetaSK), dynamo.Key(dynamo.RoomPK(roomID), dynamo.SeatsSK)}
	if clientKey != "" {
		keys = append(keys, dynamo.Key(dynamo.RoomPK(roomID), dynamo.ClientSK(clientKey)))
	}
	items, err := s.BatchGet(ctx, "load join "+roomID, keys)
	if err != nil {
		return rooms.JoinState{}, err
	}
	var st rooms.JoinState
	var room *chat.Room
	for _, it := range items {
		switch dynamo.GetS(it, dynamo.AttrSK) {
		case dynamo.MetaSK:
			var ri dynamo.RoomItem
			if err := attributevalue.UnmarshalMap(it, &ri); err != nil {
				return rooms.JoinState{}, chat.Internal(err)
			}
			r := ri.Room()
			room = &r
		case dynamo.SeatsSK:
			var si dynamo.SeatsItem
			if err := attributevalue.UnmarshalMap(it, &si); err != nil {
				return rooms.JoinState{}, chat.Internal(err)
			}
			st.Seats = seatsOf(si.Seats)
		default:
			var ci dynamo.ClientItem
			if err := attributevalue.UnmarshalMap(it, &ci); err != nil {
				return rooms.JoinState{}, chat.Internal(err)
			}
			st.Prior = &rooms.PriorGuest{GuestID: ci.GuestID, TokenHash: ci.TokenHash, CreatedAt: ci.CreatedAt}
		}
	}
	if room == nil {
		return rooms.JoinState{}, rooms.ErrUnavailable()
	}
	st.Room = *room
	return st, nil
}

// CommitJoin implements rooms.JoinStore with one TransactWriteItems of at
// most 7 items: the room's condition, its seats, the guest, the client id,
// the earlier session's deletion, the new session and the guest's reader.
func (s *Store) CommitJoin(ctx context.Context, j rooms.Join) error {
	g := j.Guest
	now := g.UpdatedAt
	roomKey := dynamo.Key(dynamo.RoomPK(j.Room.ID), dynamo.MetaSK)
	roomTTL := dynamo.Epoch(j.Room.ExpiresAt.Add(24 * time.Hour))
	items := []types.TransactWriteItem{{
		ConditionCheck: &types.ConditionCheck{
			TableName:                 &s.Name,
			Key:                       roomKey,
			ConditionExpression:       aws.String("#st = :active AND expires_epoch > :now"),
			ExpressionAttributeNames:  map[string]string{"#st": "status"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":active": dynamo.Str(chat.RoomActive), ":now": dynamo.Num(now.Unix())},
		},
	}, s.seatWrite(j, roomTTL)}
	guest := dynamo.GuestItem{
		PK: dynamo.RoomPK(g.RoomID), SK: dynamo.GuestSK(g.ID), ID: g.ID, RoomID: g.RoomID, WorkspaceID: g.WorkspaceID,
		ChannelID: g.ChannelID, Nickname: g.Nickname, PreferredLanguage: g.PreferredLanguage,
		ClientID: g.ClientID, TokenHash: j.TokenHash, SessionExpiresAt: j.SessionExpires,
		CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt,
	}
	items = append(items, dynamo.Put(s.Name, guest, "", nil))
	if g.ClientID != "" {
		ci := dynamo.ClientItem{PK: dynamo.RoomPK(g.RoomID), SK: dynamo.ClientSK(g.ClientID), GuestID: g.ID, TokenHash: j.TokenHash, CreatedAt: g.CreatedAt}
		if j.Prior == nil {
			items = append(items, dynamo.Put(s.Name, ci, "attribute_not_exists(pk)", nil))
		} else {
			// The seat, not this item, says which session is current: two
			// re-joins at once both succeed, the later one's token wins.
			items = append(items, dynamo.Put(s.Name, ci, "", nil))
			items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: &s.Name, Key: dynamo.Key(dynamo.SessionPK(j.Prior.TokenHash), dynamo.MetaSK)}})
		}
	}
	sess := dynamo.SessionItem{
		PK: dynamo.SessionPK(j.TokenHash), SK: dynamo.MetaSK, GuestID: g.ID, RoomID: g.RoomID, WorkspaceID: g.WorkspaceID,
		ChannelID: g.ChannelID, Nickname: g.Nickname, PreferredLanguage: g.PreferredLanguage,
		ExpiresAt: j.SessionExpires, TTL: dynamo.Epoch(j.SessionExpires),
	}
	items = append(items, dynamo.Put(s.Name, sess, "attribute_not_exists(pk)", nil))
	reader := dynamo.ReaderItem{
		PK: dynamo.ChanPK(g.ChannelID), SK: dynamo.ReaderGuestSK(g.ID), Kind: chat.AuthorGuest, ID: g.ID,
		Language: g.PreferredLanguage, RoomID: g.RoomID, Token: chat.SeatToken(j.TokenHash), TTL: roomTTL,
	}
	items = append(items, dynamo.Put(s.Name, reader, "", nil))

	_, err := s.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return nil
	}
	if reasons := dynamo.Cancellation(err); reasons != nil {
		switch {
		case dynamo.ConditionFailed(reasons, 0):
			return rooms.ErrUnavailable()
		case dynamo.Conflicted(reasons) || slices.ContainsFunc(reasons, func(r types.CancellationReason) bool {
			return aws.ToString(r.Code) == "ConditionalCheckFailed"
		}):
			return chat.Errorf(chat.EConflict, "join %s lost a race for its client id or a seat", g.ID)
		}
	}
	return dynamo.Fail("commit join "+g.ID, err)
}

// seatWrite is the join's write of the room's seats item: a Put of the
// first seat, or an Update that sets the guest's seat and removes the
// released ones, on the conditions of rooms.JoinStore.CommitJoin.
func (s *Store) seatWrite(j rooms.Join, ttl int64) types.TransactWriteItem {
	if j.Seats == nil {
		it := dynamo.SeatsItem{PK: dynamo.RoomPK(j.Room.ID), SK: dynamo.SeatsSK, Seats: map[string]string{j.Seat.GuestID: seatValue(j.Seat)}, TTL: ttl}
		return dynamo.Put(s.Name, it, "attribute_not_exists(pk)", nil)
	}
	names := map[string]string{"#seats": "seats", "#g": j.Seat.GuestID, "#ttl": dynamo.AttrTTL}
	values := map[string]types.AttributeValue{":seat": dynamo.Str(seatValue(j.Seat)), ":ttl": dynamo.Num(ttl)}
	update := "SET #seats.#g = :seat, #ttl = :ttl"
	cond := []string{"attribute_exists(pk)"}
	var remove []string
	for i, r := range j.Release {
		n, v := "#r"+strconv.Itoa(i), ":r"+strconv.Itoa(i)
		names[n], values[v] = r.GuestID, dynamo.Str(seatValue(r))
		remove = append(remove, "#seats."+n)
		cond = append(cond, "#seats."+n+" = "+v)
	}
	if len(remove) > 0 {
		update += " REMOVE " + strings.Join(remove, ", ")
	}
	if _, holds := j.Seats[j.Seat.GuestID]; holds {
		cond = append(cond, "attribute_exists(#seats.#g)")
	} else {
		cond = append(cond, "attribute_not_exists(#seats.#g)", "size(#seats) < :cap")
		values[":cap"] = dynamo.Num(int64(rooms.MaxLiveSessions + len(j.Release)))
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: &s.Name, Key: dynamo.Key(dynamo.RoomPK(j.Room.ID), dynamo.SeatsSK),
		UpdateExpression: aws.String(update), ConditionExpression: aws.String(strings.Join(cond, " AND ")),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	}}
}
