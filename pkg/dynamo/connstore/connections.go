package connstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/dynamo/reactionstore"
	"github.com/chatbridge/chat/pkg/realtime"
)

var (
	_ realtime.ConnectionStore = (*Store)(nil)
	_ realtime.BackfillStore   = (*Store)(nil)
	_ realtime.TypingStore     = (*Store)(nil)
	_ realtime.Holder          = (*Store)(nil)
	_ realtime.ChangeLog       = (*Store)(nil)
)

// connPrefix starts the sort key of a channel's subscribed connections:
// pk CHAN#<channel>, sk SUB#<connection id>. SUB# sorts after READER# and
// ROOM#, so the push's one Query (audienceFrom..audienceTo) reads the
// channel's readers, its rooms' states and its connections together: what
// decides whether a connection is still entitled comes with it (contract
// section 10, "Access ends at once"). The translation function's readers
// Query ends at "ROOM$" and the message lists name MSG#, so neither reads a
// connection.
const connPrefix = "SUB#"

// Sort-key bounds of the push's Query: readers, rooms, connections.
const (
	audienceFrom = dynamo.ReadersFrom
	audienceTo   = "SUB$"
)

func connSK(id string) string { return connPrefix + id }

// connLookupPK is the partition of a connection's lookup item, pk
// WSCONN#<connection id>, sk #META: its channel and author, for the
// messages a connection sends after subscribing (typing), which name no
// channel; and the time of its last typing signal.
func connLookupPK(id string) string { return "WSCONN#" + id }

// connectionItem is a subscribed WebSocket connection (realtime.Connection),
// stored twice: in its channel's partition and as its lookup item.
type connectionItem struct {
	PK           string    `dynamodbav:"pk"`
	SK           string    `dynamodbav:"sk"`
	ID           string    `dynamodbav:"connection_id"`
	WorkspaceID  string    `dynamodbav:"workspace_id"`
	ChannelID    string    `dynamodbav:"channel_id"`
	Kind         string    `dynamodbav:"kind"`
	SubjectID    string    `dynamodbav:"subject_id"`
	RoomID       string    `dynamodbav:"room_id,omitempty"`
	Language     string    `dynamodbav:"language"`
	Name         string    `dynamodbav:"name,omitempty"`
	Token        string    `dynamodbav:"token,omitempty"`
	Backfilled   []string  `dynamodbav:"backfilled,stringset,omitempty"`
	Pending      bool      `dynamodbav:"pending,omitempty"`
	PendingUntil int64     `dynamodbav:"pending_until,omitempty"` // unix ms
	Held         []string  `dynamodbav:"held,stringset,omitempty"`
	ExpiresAt    time.Time `dynamodbav:"expires_at"`
	ExpiresEpoch int64     `dynamodbav:"ttl"`
}

func (it connectionItem) connection() realtime.Connection {
	return realtime.Connection{ID: it.ID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID, Kind: it.Kind,
		SubjectID: it.SubjectID, RoomID: it.RoomID, Language: it.Language, ExpiresAt: it.ExpiresAt,
		Name: it.Name, Token: it.Token, Backfilled: it.Backfilled, Pending: it.Pending}
}

// PutConnection implements realtime.ConnectionStore with one
// BatchWriteItem: the connection's item in its channel and its lookup item.
func (s *Store) PutConnection(ctx context.Context, c realtime.Connection) error {
	if !chat.ValidID(c.ChannelID) || !realtime.ValidConnectionID(c.ID) {
		return chat.Internal(fmt.Errorf("dynamo: put connection %q of channel %q: invalid id", c.ID, c.ChannelID))
	}
	it := connectionItem{
		PK: dynamo.ChanPK(c.ChannelID), SK: connSK(c.ID), ID: c.ID, WorkspaceID: c.WorkspaceID, ChannelID: c.ChannelID,
		Kind: c.Kind, SubjectID: c.SubjectID, RoomID: c.RoomID, Language: c.Language, Name: c.Name, Token: c.Token,
		Pending: c.Pending, ExpiresAt: c.ExpiresAt.UTC(), ExpiresEpoch: dynamo.Epoch(c.ExpiresAt),
	}
	if c.Pending && !c.PendingUntil.IsZero() {
		it.PendingUntil = c.PendingUntil.UnixMilli()
	}
	var reqs []types.WriteRequest
	for _, k := range [][2]string{{it.PK, it.SK}, {connLookupPK(c.ID), dynamo.MetaSK}} {
		it.PK, it.SK = k[0], k[1]
		av, err := attributevalue.MarshalMap(it)
		if err != nil {
			return chat.Internal(err)
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
	}
	return s.BatchWrite(ctx, "put connection "+c.ID, reqs)
}

// Connections implements realtime.ConnectionStore with one Query of the
// channel's readers, rooms and connections (more only past 1 MB: some
// thousands of them), read consistently, so a connection subscribed a
// moment ago is pushed to. Each connection carries its Access, read in the
// same Query. Expired items (their TTL deletion lags) are left out.
func (s *Store) Connections(ctx context.Context, channelID string, now time.Time) ([]realtime.Connection, error) {
	op := "connections of channel " + channelID
	items, err := s.QueryAll(ctx, op, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :from AND :to"),
		ExpressionAttributeNames:  map[string]string{"#pk": dynamo.AttrPK, "#sk": dynamo.AttrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(dynamo.ChanPK(channelID)), ":from": dynamo.Str(audienceFrom), ":to": dynamo.Str(audienceTo)},
	})
	if err != nil {
		return nil, err
	}
	readers := map[string]string{} // "<kind>#<id>" -> token
	type roomState struct {
		status  string
		expires time.Time
	}
	roomStates := map[string]roomState{}
	var out []realtime.Connection
	for _, av := range items {
		sk := dynamo.GetS(av, dynamo.AttrSK)
		switch {
		case strings.HasPrefix(sk, "READER#USER#"):
			readers[realtime.KindMember+"#"+strings.TrimPrefix(sk, "READER#USER#")] = dynamo.GetS(av, "token")
		case strings.HasPrefix(sk, "READER#GUEST#"):
			readers[realtime.KindGuest+"#"+strings.TrimPrefix(sk, "READER#GUEST#")] = dynamo.GetS(av, "token")
		case strings.HasPrefix(sk, "ROOM#"):
			var r dynamo.ChannelRoomItem
			if err := attributevalue.UnmarshalMap(av, &r); err != nil {
				return nil, chat.Internal(fmt.Errorf("dynamo: %s: %w", op, err))
			}
			roomStates[strings.TrimPrefix(sk, "ROOM#")] = roomState{r.Status, time.Unix(r.ExpiresEpoch, 0).UTC()}
		case strings.HasPrefix(sk, connPrefix):
			var it connectionItem
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				return nil, chat.Internal(fmt.Errorf("dynamo: %s: %w", op, err))
			}
			if c := it.connection(); c.Live(now) {
				out = append(out, c)
			}
		}
	}
	for i, c := range out {
		token, reader := readers[c.Kind+"#"+c.SubjectID]
		a := &realtime.Access{Reader: reader, ReaderToken: token}
		if c.Kind == realtime.KindGuest {
			r := roomStates[c.RoomID]
			a.RoomStatus, a.RoomExpires = r.status, r.expires
		}
		out[i].Access = a
	}
	return out, nil
}

// DeleteConnection implements realtime.ConnectionStore with one DeleteItem
// of the connection's item in its channel. Its lookup item is left to its
// TTL: a typing signal through it finds the connection gone from the
// channel and is dropped.
func (s *Store) DeleteConnection(ctx context.Context, channelID, connectionID string) error {
	_, err := s.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.Name, Key: dynamo.Key(dynamo.ChanPK(channelID), connSK(connectionID))})
	return dynamo.Fail("delete connection "+connectionID, err)
}

// Ready implements realtime.BackfillStore with one UpdateItem of the
// connection's item in its channel: REMOVE pending and held, SET
// backfilled, on condition that it exists; ALL_OLD returns what was held.
func (s *Store) Ready(ctx context.Context, channelID, connectionID string, sent []string) ([]string, error) {
	in := &dynamodb.UpdateItemInput{
		TableName:           &s.Name,
		Key:                 dynamo.Key(dynamo.ChanPK(channelID), connSK(connectionID)),
		UpdateExpression:    aws.String("REMOVE pending, held"),
		ConditionExpression: aws.String("attribute_exists(pk)"),
		ReturnValues:        types.ReturnValueAllOld,
	}
	if len(sent) > 0 {
		in.UpdateExpression = aws.String("SET backfilled = :ids REMOVE pending, held")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":ids": &types.AttributeValueMemberSS{Value: sent}}
	}
	out, err := s.Client.UpdateItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil, nil
	}
	if err != nil {
		return nil, dynamo.Fail("ready connection "+connectionID, err)
	}
	var it connectionItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return nil, chat.Internal(fmt.Errorf("dynamo: ready connection %s: %w", connectionID, err))
	}
	return it.Held, nil
}

// Hold implements realtime.Holder with one UpdateItem of the connection's
// item: ADD held, on condition that it is pending and its pending_until
// (Connection.PendingUntil) has not passed. When it is not, the
// condition's failure returns the item (ALL_OLD), whose backfilled ids are
// returned: a subscribe that died before Ready holds nothing after its
// time.
func (s *Store) Hold(ctx context.Context, channelID, connectionID, messageID string) (bool, []string, error) {
	_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           &s.Name,
		Key:                 dynamo.Key(dynamo.ChanPK(channelID), connSK(connectionID)),
		UpdateExpression:    aws.String("ADD held :id"),
		ConditionExpression: aws.String("attribute_exists(pending) AND (attribute_not_exists(pending_until) OR pending_until > :now)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": &types.AttributeValueMemberSS{Value: []string{messageID}},
			":now": dynamo.Num(time.Now().UnixMilli())},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		var it connectionItem
		if len(ccf.Item) > 0 {
			if err := attributevalue.UnmarshalMap(ccf.Item, &it); err != nil {
				return false, nil, chat.Internal(fmt.Errorf("dynamo: hold for connection %s: %w", connectionID, err))
			}
		}
		return false, it.Backfilled, nil
	}
	if err != nil {
		return false, nil, dynamo.Fail("hold for connection "+connectionID, err)
	}
	return true, nil, nil
}

// Messages implements realtime.BackfillStore with one BatchGetItem per 100
// ids.
func (s *Store) Messages(ctx context.Context, channelID string, ids []string) ([]chat.Message, error) {
	var out []chat.Message
	for start := 0; start < len(ids); start += dynamo.TranslationBatch {
		var keys []map[string]types.AttributeValue
		for _, id := range ids[start:min(start+dynamo.TranslationBatch, len(ids))] {
			keys = append(keys, dynamo.Key(dynamo.ChanPK(channelID), dynamo.MessageSK(id)))
		}
		items, err := s.BatchGet(ctx, "messages of channel "+channelID, keys)
		if err != nil {
			return nil, err
		}
		for _, av := range items {
			var it dynamo.MessageItem
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				return nil, chat.Internal(fmt.Errorf("dynamo: messages of channel %s: %w", channelID, err))
			}
			out = append(out, it.Message())
		}
	}
	slices.SortFunc(out, func(a, b chat.Message) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// TypingConnection implements realtime.TypingStore with one UpdateItem of
// the connection's lookup item: SET typing_at = now, on condition that the
// item exists, has not expired, and its last typing_at is at least every
// ago; ALL_NEW returns its channel and author. A failed condition (not
// subscribed, or too soon) is false, not an error.
func (s *Store) TypingConnection(ctx context.Context, connectionID string, now time.Time, every time.Duration) (realtime.Connection, bool, error) {
	out, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &s.Name,
		Key:                      dynamo.Key(connLookupPK(connectionID), dynamo.MetaSK),
		UpdateExpression:         aws.String("SET typing_at = :now"),
		ConditionExpression:      aws.String("attribute_exists(pk) AND #ttl > :sec AND (attribute_not_exists(typing_at) OR typing_at <= :before)"),
		ExpressionAttributeNames: map[string]string{"#ttl": dynamo.AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": dynamo.Num(now.UnixMilli()), ":sec": dynamo.Num(now.Unix()), ":before": dynamo.Num(now.Add(-every).UnixMilli()),
		},
		ReturnValues: types.ReturnValueAllNew,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return realtime.Connection{}, false, nil
	}
	if err != nil {
		return realtime.Connection{}, false, dynamo.Fail("typing of connection "+connectionID, err)
	}
	var it connectionItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return realtime.Connection{}, false, chat.Internal(fmt.Errorf("dynamo: typing of connection %s: %w", connectionID, err))
	}
	c := it.connection()
	return c, c.Live(now), nil
}

// Backfill implements realtime.BackfillStore with one Query of the
// channel's messages after since, newest first, reversed: the newest max
// of them, oldest first. next is the list position of the oldest returned
// when more messages lie between it and since, or when DynamoDB ended the
// Query at 1 MB first (the client pages the rest with GET).
func (s *Store) Backfill(ctx context.Context, channelID, since string, max int) ([]chat.Message, string, error) {
	if !chat.ValidID(since) {
		return nil, "", chat.Internal(fmt.Errorf("dynamo: backfill of channel %s: since %q is not an id", channelID, since))
	}
	op := "backfill of channel " + channelID
	// "MSG#<since>" itself sorts first in the range; one more than max
	// beyond it tells whether more exist.
	res, err := s.Client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 &s.Name,
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :from AND :to"),
		ExpressionAttributeNames:  map[string]string{"#pk": dynamo.AttrPK, "#sk": dynamo.AttrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(dynamo.ChanPK(channelID)), ":from": dynamo.Str(dynamo.MessageSK(since)), ":to": dynamo.Str("MSG$")},
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(int32(max + 2)),
	})
	if err != nil {
		return nil, "", dynamo.Fail(op, err)
	}
	var msgs []chat.Message
	more := len(res.LastEvaluatedKey) > 0
	for _, av := range res.Items {
		if dynamo.GetS(av, dynamo.AttrSK) == dynamo.MessageSK(since) {
			more = false // reached since: nothing lies between
			break
		}
		if len(msgs) == max {
			more = true
			break
		}
		var it dynamo.MessageItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return nil, "", chat.Internal(fmt.Errorf("dynamo: %s: %w", op, err))
		}
		msgs = append(msgs, it.Message())
	}
	slices.Reverse(msgs)
	switch {
	case !more:
		return msgs, "", nil
	case len(msgs) == 0:
		// An item is at most 400 KB, so a 1 MB page holds two.
		return nil, "", chat.Internal(fmt.Errorf("dynamo: %s: a page without a message", op))
	}
	return msgs, dynamo.MessageSK(msgs[0].ID), nil
}

// RealtimeChange returns what a stream record means to the realtime push:
// a message inserted or modified, a room of a channel closed (its
// channel's ROOM# item changing to closed), or a reaction count shard
// changed (see reactionChange). Other records give false. A message's
// MODIFY that changes neither its revision, its deletion nor its
// translations (registering a reaction's emoji or shards, a thread's
// reply count) is a MessageChanged that pushes nothing.
func RealtimeChange(eventName string, oldImage, newImage map[string]types.AttributeValue) (realtime.Change, bool) {
	pk, sk := dynamo.GetS(newImage, dynamo.AttrPK), dynamo.GetS(newImage, dynamo.AttrSK)
	switch {
	case strings.HasPrefix(pk, "CHAN#") && strings.HasPrefix(sk, "ROOM#"):
		if eventName != "MODIFY" || dynamo.GetS(newImage, "status") != chat.RoomClosed || dynamo.GetS(oldImage, "status") == chat.RoomClosed {
			return realtime.Change{}, false
		}
		return realtime.Change{Kind: realtime.RoomClosed, ChannelID: strings.TrimPrefix(pk, "CHAN#"), RoomID: strings.TrimPrefix(sk, "ROOM#")}, true
	case strings.HasPrefix(pk, reactionShardPrefix):
		return reactionChange(eventName, oldImage, newImage)
	case eventName == "INSERT":
		m, ok := dynamo.MessageFromImage(newImage)
		return realtime.Change{Kind: realtime.MessageStored, Message: m}, ok
	case eventName == "MODIFY":
		m, ok := dynamo.MessageFromImage(newImage)
		before, okBefore := dynamo.MessageFromImage(oldImage)
		if !ok || !okBefore {
			return realtime.Change{}, false
		}
		switch {
		case m.Deleted() && before.Deleted():
			return realtime.Change{}, false
		case m.Deleted():
			return realtime.Change{Kind: realtime.MessageDeleted, Message: m, Before: before}, true
		case m.Rev() != before.Rev():
			return realtime.Change{Kind: realtime.MessageEdited, Message: m, Before: before}, true
		}
		return realtime.Change{Kind: realtime.MessageChanged, Message: m, Before: before}, true
	}
	return realtime.Change{}, false
}

// changePrefix starts the sort key of a channel's change log: pk
// CHAN#<channel>, sk CHG#<sortTime(at)>#<message id>. CHG# sorts before
// MSG#, READER#, ROOM# and SUB#, so no other Query of the channel reads it.
const changePrefix = "CHG#"

// maxChangeEntries bounds the entries one backfill reads from the change
// log: a message changed many times has one entry a change.
const maxChangeEntries = 1000

// LogChange implements realtime.ChangeLog with one UpdateItem (an upsert:
// a retried push writes the same entry again, or one more at a later time,
// which the read folds): the entry's message id and its TTL,
// realtime.ChangeRetention after at.
func (s *Store) LogChange(ctx context.Context, channelID, messageID string, at time.Time) error {
	if !chat.ValidID(channelID) || !chat.ValidID(messageID) {
		return chat.Internal(fmt.Errorf("dynamo: log change of message %q of channel %q: invalid id", messageID, channelID))
	}
	_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.Name,
		Key:                       dynamo.Key(dynamo.ChanPK(channelID), changePrefix+dynamo.SortTime(at)+"#"+messageID),
		UpdateExpression:          aws.String("SET message_id = :id, #ttl = :ttl"),
		ExpressionAttributeNames:  map[string]string{"#ttl": dynamo.AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": dynamo.Str(messageID), ":ttl": dynamo.Num(dynamo.Epoch(at.Add(realtime.ChangeRetention)))},
	})
	return dynamo.Fail("log change of message "+messageID, err)
}

// Changed implements realtime.BackfillStore with one strongly consistent
// Query of the change log from since on, at most maxChangeEntries entries
// (about 100 bytes each: never 1 MB); more is incomplete. Each message
// comes once, at its latest entry, in that order.
func (s *Store) Changed(ctx context.Context, channelID string, since time.Time, max int) ([]realtime.LoggedChange, bool, error) {
	op := "change log of channel " + channelID
	from := changePrefix + dynamo.SortTime(since.Truncate(time.Millisecond))
	res, err := s.Client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 &s.Name,
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :from AND :to"),
		ExpressionAttributeNames:  map[string]string{"#pk": dynamo.AttrPK, "#sk": dynamo.AttrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(dynamo.ChanPK(channelID)), ":from": dynamo.Str(from), ":to": dynamo.Str("CHG$")},
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(maxChangeEntries),
	})
	if err != nil {
		return nil, false, dynamo.Fail(op, err)
	}
	items := res.Items
	if len(res.LastEvaluatedKey) > 0 {
		// More entries than one read takes (or 1 MB of them).
		return nil, false, nil
	}
	latest := map[string]int{}
	var out []realtime.LoggedChange
	for _, av := range items {
		sk := strings.TrimPrefix(dynamo.GetS(av, dynamo.AttrSK), changePrefix)
		stamp, id, ok := strings.Cut(sk, "#")
		at, err := time.Parse(time.RFC3339Nano, stamp)
		if !ok || err != nil || !chat.ValidID(id) {
			return nil, false, chat.Internal(fmt.Errorf("dynamo: %s: malformed entry %q", op, sk))
		}
		if i, seen := latest[id]; seen {
			out[i].MessageID = "" // folded into this later entry
		}
		latest[id] = len(out)
		out = append(out, realtime.LoggedChange{MessageID: id, At: at})
	}
	out = slices.DeleteFunc(out, func(l realtime.LoggedChange) bool { return l.MessageID == "" })
	if len(out) > max {
		return out[:max], false, nil
	}
	return out, true, nil
}

// Reaction count shards (contract section 18): pk RXC#<message>#<k>, sk
// C, a number attribute n:<emoji> per emoji (reactionstore's layout).
const (
	reactionShardPrefix = reactionstore.ShardPrefix
	reactionCountPrefix = reactionstore.CountAttrPrefix
)

// reactionChange is a count shard's INSERT or MODIFY: a ReactionCounted
// change naming the emoji whose n:<emoji> differs between the images, in
// a stable order; false when none does, or the item has no ids.
func reactionChange(eventName string, oldImage, newImage map[string]types.AttributeValue) (realtime.Change, bool) {
	if eventName != "INSERT" && eventName != "MODIFY" {
		return realtime.Change{}, false
	}
	id, channel := dynamo.GetS(newImage, "message_id"), dynamo.GetS(newImage, "channel_id")
	if id == "" || channel == "" {
		return realtime.Change{}, false
	}
	var changed []string
	for name, v := range newImage {
		if !strings.HasPrefix(name, reactionCountPrefix) {
			continue
		}
		if old, ok := oldImage[name]; !ok || numberOf(old) != numberOf(v) {
			changed = append(changed, strings.TrimPrefix(name, reactionCountPrefix))
		}
	}
	for name := range oldImage {
		if _, ok := newImage[name]; strings.HasPrefix(name, reactionCountPrefix) && !ok {
			changed = append(changed, strings.TrimPrefix(name, reactionCountPrefix))
		}
	}
	if len(changed) == 0 {
		return realtime.Change{}, false
	}
	slices.Sort(changed)
	return realtime.Change{Kind: realtime.ReactionCounted, Message: chat.Message{ID: id, ChannelID: channel}, Emoji: changed}, true
}

// numberOf is a number attribute's digits ("" for another type).
func numberOf(v types.AttributeValue) string {
	if n, ok := v.(*types.AttributeValueMemberN); ok {
		return n.Value
	}
	return ""
}
