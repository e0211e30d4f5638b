package dynamo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/realtime"
)

var _ realtime.ConnectionStore = (*Store)(nil)

// connPrefix starts the sort key of a channel's subscribed connections:
// pk CHAN#<channel>, sk CONN#<connection id>. CONN# sorts before MSG#,
// READER# and ROOM#, and every other query of the channel's partition names
// its own prefix or range, so none reads a connection.
const connPrefix = "CONN#"

func connSK(id string) string { return connPrefix + id }

// connectionItem is a subscribed WebSocket connection (realtime.Connection).
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
	ExpiresAt    time.Time `dynamodbav:"expires_at"`
	ExpiresEpoch int64     `dynamodbav:"ttl"`
}

// PutConnection implements realtime.ConnectionStore with one PutItem.
func (s *Store) PutConnection(ctx context.Context, c realtime.Connection) error {
	if !chat.ValidID(c.ChannelID) || !realtime.ValidConnectionID(c.ID) {
		return chat.Internal(fmt.Errorf("dynamo: put connection %q of channel %q: invalid id", c.ID, c.ChannelID))
	}
	item, err := attributevalue.MarshalMap(connectionItem{
		PK: chanPK(c.ChannelID), SK: connSK(c.ID), ID: c.ID, WorkspaceID: c.WorkspaceID, ChannelID: c.ChannelID,
		Kind: c.Kind, SubjectID: c.SubjectID, RoomID: c.RoomID, Language: c.Language,
		ExpiresAt: c.ExpiresAt.UTC(), ExpiresEpoch: epoch(c.ExpiresAt),
	})
	if err != nil {
		return chat.Internal(err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item})
	return fail("put connection "+c.ID, err)
}

// Connections implements realtime.ConnectionStore with one Query of the
// channel's CONN# keys (more only past 1 MB: about 4,000 connections),
// read consistently, so a connection subscribed a moment ago is pushed to.
// Expired items (their TTL deletion lags) are left out.
func (s *Store) Connections(ctx context.Context, channelID string, now time.Time) ([]realtime.Connection, error) {
	op := "connections of channel " + channelID
	items, err := s.queryAll(ctx, op, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :conn)"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(chanPK(channelID)), ":conn": str(connPrefix)},
	})
	if err != nil {
		return nil, err
	}
	out := make([]realtime.Connection, 0, len(items))
	for _, av := range items {
		var it connectionItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return nil, chat.Internal(fmt.Errorf("dynamo: %s: %w", op, err))
		}
		c := realtime.Connection{ID: it.ID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID, Kind: it.Kind,
			SubjectID: it.SubjectID, RoomID: it.RoomID, Language: it.Language, ExpiresAt: it.ExpiresAt}
		if c.Live(now) {
			out = append(out, c)
		}
	}
	return out, nil
}

// DeleteConnection implements realtime.ConnectionStore with one DeleteItem.
func (s *Store) DeleteConnection(ctx context.Context, channelID, connectionID string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: key(chanPK(channelID), connSK(connectionID))})
	return fail("delete connection "+connectionID, err)
}

// RealtimeChange returns what a stream record means to the realtime push:
// a message inserted or modified, or a room of a channel closed (its
// channel's ROOM# item changing to closed). Other records give false.
func RealtimeChange(eventName string, oldImage, newImage map[string]types.AttributeValue) (realtime.Change, bool) {
	pk, sk := getS(newImage, attrPK), getS(newImage, attrSK)
	switch {
	case strings.HasPrefix(pk, "CHAN#") && strings.HasPrefix(sk, "ROOM#"):
		if eventName != "MODIFY" || getS(newImage, "status") != chat.RoomClosed || getS(oldImage, "status") == chat.RoomClosed {
			return realtime.Change{}, false
		}
		return realtime.Change{Kind: realtime.RoomClosed, ChannelID: strings.TrimPrefix(pk, "CHAN#"), RoomID: strings.TrimPrefix(sk, "ROOM#")}, true
	case eventName == "INSERT":
		m, ok := MessageFromImage(newImage)
		return realtime.Change{Kind: realtime.MessageStored, Message: m}, ok
	case eventName == "MODIFY":
		m, ok := MessageFromImage(newImage)
		before, okBefore := MessageFromImage(oldImage)
		if !ok || !okBefore {
			return realtime.Change{}, false
		}
		return realtime.Change{Kind: realtime.MessageChanged, Message: m, Before: before}, true
	}
	return realtime.Change{}, false
}
