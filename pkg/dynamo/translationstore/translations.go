package translationstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/translation"
)

var _ translation.Store = (*Store)(nil)

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
	// QueryAll reads consistently: a guest who joined a moment ago reads
	// this message too.
	items, err := s.QueryAll(ctx, op, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String("#pk = :pk AND #sk BETWEEN :from AND :to"),
		ProjectionExpression:   aws.String("#sk, #id, #lang, #room, #st, #exp"),
		ExpressionAttributeNames: map[string]string{
			"#pk": dynamo.AttrPK, "#sk": dynamo.AttrSK, "#id": "id", "#lang": "language",
			"#room": "room_id", "#st": "status", "#exp": "expires_epoch",
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": dynamo.Str(dynamo.ChanPK(channelID)), ":from": dynamo.Str(dynamo.ReadersFrom), ":to": dynamo.Str(dynamo.ReadersTo),
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

// Message implements translation.Store with one strongly consistent
// GetItem of the message item, projecting what translating it needs: its
// content, its attachments' alt texts (with the attachments: an alt text
// alone cannot be projected from each element of a list), its
// translated_languages set and its untranslated marker. A
// redelivery right after a save sees the set. Errors: ENotFound when the
// message does not exist; EUnavailable, EInternal.
func (s *Store) Message(ctx context.Context, channelID, messageID string) (translation.Stored, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:            &s.Name,
		Key:                  dynamo.Key(dynamo.ChanPK(channelID), dynamo.MessageSK(messageID)),
		ProjectionExpression: aws.String("#c, #tl, #ps, #rev, #a.#n, #at"),
		ExpressionAttributeNames: map[string]string{
			"#c": "content", "#tl": dynamo.AttrTranslatedLanguages, "#ps": dynamo.AttrPendingShard, "#rev": dynamo.AttrRevision,
			"#a": "author", "#n": "name", "#at": "attachments",
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return translation.Stored{}, dynamo.Fail("message "+messageID+" to translate", err)
	}
	if out.Item == nil {
		return translation.Stored{}, chat.Errorf(chat.ENotFound, "message %s does not exist", messageID)
	}
	var it struct {
		Content   string   `dynamodbav:"content"`
		Languages []string `dynamodbav:"translated_languages,stringset"`
		Pending   string   `dynamodbav:"pending_shard"`
		Revision  int      `dynamodbav:"revision"`
		Author    struct {
			Name string `dynamodbav:"name"`
		} `dynamodbav:"author"`
		Attachments []struct {
			AltText string `dynamodbav:"alt_text"`
		} `dynamodbav:"attachments"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return translation.Stored{}, chat.Internal(fmt.Errorf("dynamo: message %s to translate: %w", messageID, err))
	}
	done := make(map[string]bool, len(it.Languages))
	for _, l := range it.Languages {
		done[l] = true
	}
	var alts []string
	for _, a := range it.Attachments {
		alts = append(alts, a.AltText)
	}
	return translation.Stored{Content: it.Content, AltTexts: alts, Done: done, Marked: it.Pending != "", Revision: max(1, it.Revision),
		AuthorName: it.Author.Name}, nil
}

// SaveTranslations implements translation.Store. It writes the translation
// items with BatchWriteItem, 25 items a call (one call for a message's usual
// few languages), retrying unprocessed items with backoff; a translation
// replaces the stored one of the same message and language. Then one
// UpdateItem adds their languages to the message item's
// translated_languages set and, when finished, removes the message's
// untranslated marker, on condition that the message exists. With no
// translations and finished, that UpdateItem only removes the marker.
//
// The order is what makes a redelivery safe: the set never names a
// translation that is not stored, and the marker goes only with the last
// write. A crash between the two writes leaves the languages out of the
// set, so the next delivery translates them again and overwrites the items
// (a wasted call, never a missing translation). A message deleted
// meanwhile fails the condition, which is not an error: there is nothing
// left to record on.
//
// Errors: EUnavailable (also for items still unprocessed after the
// retries); EInternal, also when a translation in ts is not of messageID
// or its item would pass DynamoDB's 400 KB (translation.Service never
// gives one: it stores an oversized answer as the original text).
func (s *Store) SaveTranslations(ctx context.Context, channelID, messageID string, ts []chat.Translation, finished bool) error {
	if len(ts) == 0 && !finished {
		return nil
	}
	op := "save translations of message " + messageID
	reqs := make([]types.WriteRequest, len(ts))
	langs := make([]string, 0, len(ts))
	seen := make(map[string]bool, len(ts))
	for i, t := range ts {
		if t.MessageID != messageID {
			return chat.Internal(fmt.Errorf("dynamo: %s: a translation of message %s", op, t.MessageID))
		}
		av, err := attributevalue.MarshalMap(dynamo.TranslationItemOf(t, 0))
		if err != nil {
			return chat.Internal(fmt.Errorf("dynamo: marshal translation: %w", err))
		}
		if n := dynamo.ItemSize(av); n > dynamo.MaxItemBytes {
			return chat.Internal(fmt.Errorf("dynamo: %s: the %s item would be %d bytes, more than DynamoDB's %d", op, t.Language, n, dynamo.MaxItemBytes))
		}
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: av}}
		if !seen[t.Language] {
			seen[t.Language] = true
			langs = append(langs, t.Language)
		}
	}
	if len(reqs) > 0 {
		if err := s.BatchWrite(ctx, op, reqs); err != nil {
			return err
		}
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                 &s.Name,
		Key:                       dynamo.Key(dynamo.ChanPK(channelID), dynamo.MessageSK(messageID)),
		ConditionExpression:       aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:  map[string]string{"#pk": dynamo.AttrPK},
		ExpressionAttributeValues: map[string]types.AttributeValue{},
	}
	var update string
	if len(langs) > 0 {
		update = "ADD #tl :langs"
		in.ExpressionAttributeNames["#tl"] = dynamo.AttrTranslatedLanguages
		in.ExpressionAttributeValues[":langs"] = &types.AttributeValueMemberSS{Value: langs}
	}
	if finished {
		update += " REMOVE #ps, #pd, #pa"
		in.ExpressionAttributeNames["#ps"], in.ExpressionAttributeNames["#pd"], in.ExpressionAttributeNames["#pa"] =
			dynamo.AttrPendingShard, dynamo.AttrPendingDue, dynamo.AttrPendingAttempts
		// translated_at, set once, is what the relay turns into
		// Message.translated (eventstream.go).
		update += " SET #ta = if_not_exists(#ta, :ta)"
		in.ExpressionAttributeNames["#ta"] = dynamo.AttrTranslatedAt
		in.ExpressionAttributeValues[":ta"] = dynamo.Str(time.Now().UTC().Format(time.RFC3339Nano))
	}
	in.UpdateExpression = aws.String(strings.TrimSpace(update))
	if len(in.ExpressionAttributeValues) == 0 {
		in.ExpressionAttributeValues = nil
	}
	_, err := s.Client.UpdateItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil
	}
	return dynamo.Fail("record translated languages of message "+messageID, err)
}
