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
	"github.com/chatbridge/chat/pkg/translation"
)

var _ translation.Store = (*Store)(nil)

// Sort-key bounds of a channel's readers and rooms: every READER#... and
// ROOM#... key lies between them, and MSG#... keys sort before both, so the
// readers query never reads a message.
const (
	readersFrom = "READER#"
	readersTo   = "ROOM$"
)

// Readers implements translation.Store with one Query (more only past 1 MB
// of readers): the channel's reader items and its rooms' items, in one key
// range, read with queryAll (apply.go). Users always read; a guest reads while the room it joined is active
// and unexpired at now. Errors: EUnavailable, EInternal.
func (s *Store) Readers(ctx context.Context, channelID string, now time.Time) ([]translation.Reader, error) {
	type row struct {
		SK           string `dynamodbav:"sk"`
		ID           string `dynamodbav:"id"`
		Language     string `dynamodbav:"language"`
		RoomID       string `dynamodbav:"room_id"`
		Status       string `dynamodbav:"status"`
		ExpiresEpoch int64  `dynamodbav:"expires_epoch"`
	}
	op := "readers of channel " + channelID
	// queryAll reads consistently: a guest who joined a moment ago reads
	// this message too.
	items, err := s.queryAll(ctx, op, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String("#pk = :pk AND #sk BETWEEN :from AND :to"),
		ProjectionExpression:   aws.String("#sk, #id, #lang, #room, #st, #exp"),
		ExpressionAttributeNames: map[string]string{
			"#pk": attrPK, "#sk": attrSK, "#id": "id", "#lang": "language",
			"#room": "room_id", "#st": "status", "#exp": "expires_epoch",
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(chanPK(channelID)), ":from": str(readersFrom), ":to": str(readersTo),
		},
	})
	if err != nil {
		return nil, err
	}
	var users, guests []row
	active := map[string]bool{}
	for _, item := range items {
		var r row
		if err := attributevalue.UnmarshalMap(item, &r); err != nil {
			return nil, chat.Internal(fmt.Errorf("dynamo: %s: %w", op, err))
		}
		switch {
		case strings.HasPrefix(r.SK, "ROOM#"):
			active[r.ID] = r.Status == chat.RoomActive && r.ExpiresEpoch > now.Unix()
		case strings.HasPrefix(r.SK, "READER#GUEST#"):
			guests = append(guests, r)
		case strings.HasPrefix(r.SK, "READER#USER#"):
			users = append(users, r)
		}
	}
	readers := make([]translation.Reader, 0, len(users)+len(guests))
	for _, r := range users {
		readers = append(readers, translation.Reader{Kind: chat.AuthorUser, ID: r.ID, Language: r.Language})
	}
	for _, r := range guests {
		// Rooms sort after readers, so a guest is judged once all are known.
		if active[r.RoomID] {
			readers = append(readers, translation.Reader{Kind: chat.AuthorGuest, ID: r.ID, Language: r.Language})
		}
	}
	return readers, nil
}

// TranslatedLanguages implements translation.Store with one Query of the
// message's translation keys, projecting only the key. Errors: EUnavailable,
// EInternal.
func (s *Store) TranslatedLanguages(ctx context.Context, messageID string) (map[string]bool, error) {
	// Consistent (queryAll): a redelivery right after a save must see it.
	items, err := s.queryAll(ctx, "translated languages of message "+messageID, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :tr)"),
		ProjectionExpression:      aws.String("#sk"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(translationPK(messageID)), ":tr": str(translationSK(""))},
	})
	if err != nil {
		return nil, err
	}
	done := make(map[string]bool, len(items))
	for _, item := range items {
		done[strings.TrimPrefix(getS(item, attrSK), translationSK(""))] = true
	}
	return done, nil
}

// SaveTranslations implements translation.Store with BatchWriteItem, 25
// items a call (one call for a message's usual few languages), retrying
// unprocessed items with backoff. A translation replaces the stored one of
// the same message and language. Errors: EUnavailable (also for items still
// unprocessed after the retries), EInternal.
func (s *Store) SaveTranslations(ctx context.Context, ts []chat.Translation) error {
	if len(ts) == 0 {
		return nil
	}
	reqs := make([]types.WriteRequest, len(ts))
	for i, t := range ts {
		av, err := attributevalue.MarshalMap(translationItem{
			PK: translationPK(t.MessageID), SK: translationSK(t.Language), MessageID: t.MessageID,
			Language: t.Language, Content: t.Content, SourceLanguage: t.SourceLanguage, CreatedAt: t.CreatedAt,
		})
		if err != nil {
			return chat.Internal(fmt.Errorf("dynamo: marshal translation: %w", err))
		}
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: av}}
	}
	return s.batchWrite(ctx, "save translations of message "+ts[0].MessageID, reqs)
}
