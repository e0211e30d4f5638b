package translationstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

var _ translation.RevisionSaver = (*Store)(nil)

// transactionBytes keeps a chunk of translations under
// TransactWriteItems' 4 MB, with room for the message's update.
const transactionBytes = 3_500_000

// SaveRevision implements translation.RevisionSaver: the translation items
// (each recording its revision) and the update of the message item (its
// translated_languages, and when finished the removal of its marker and
// translated_at) are one TransactWriteItems (one UpdateItem when there is
// no translation to store: nothing to keep atomic), conditioned on the message
// existing, not deleted, at revision rev. An edit in between fails the
// condition and nothing is written: a translation of an older revision
// can never replace a newer one, whatever order the jobs finish in.
// Translations past one transaction's 4 MB or 100 items go in earlier
// transactions that carry the same condition as a ConditionCheck; the
// message's update comes with the last, so the set never names a
// translation that is not stored. Every write also removes the message's
// outbox attribute (dynamo.AttrOutbox), and one that stores translations
// sets the message's source_language to their source (the language the
// service detected). A refused save is not an error.
// Errors: EUnavailable; EInternal for a translation of another message or
// one past DynamoDB's 400 KB.
func (s *Store) SaveRevision(ctx context.Context, channelID, messageID string, rev int, ts []chat.Translation, finished bool) error {
	if len(ts) == 0 && !finished {
		return nil
	}
	op := "save translations of message " + messageID
	names := map[string]string{"#pk": dynamo.AttrPK, "#del": dynamo.AttrDeletedAt}
	values := map[string]types.AttributeValue{}
	cond := "attribute_exists(#pk) AND attribute_not_exists(#del) AND " + dynamo.RevisionCond(names, values, max(1, rev))
	msgKey := dynamo.Key(dynamo.ChanPK(channelID), dynamo.MessageSK(messageID))

	var chunks [][]types.TransactWriteItem
	var chunk []types.TransactWriteItem
	size := 0
	var langs []string
	seen := map[string]bool{}
	for _, t := range ts {
		if t.MessageID != messageID {
			return chat.Internal(fmt.Errorf("dynamo: %s: a translation of message %s", op, t.MessageID))
		}
		av, err := attributevalue.MarshalMap(dynamo.TranslationItemOf(t, max(1, rev)))
		if err != nil {
			return chat.Internal(fmt.Errorf("dynamo: marshal translation: %w", err))
		}
		n := dynamo.ItemSize(av)
		if n > dynamo.MaxItemBytes {
			return chat.Internal(fmt.Errorf("dynamo: %s: the %s item would be %d bytes, more than DynamoDB's %d", op, t.Language, n, dynamo.MaxItemBytes))
		}
		if len(chunk) >= 99 || size+n > transactionBytes {
			chunks = append(chunks, chunk)
			chunk, size = nil, 0
		}
		chunk = append(chunk, types.TransactWriteItem{Put: &types.Put{TableName: &s.Name, Item: av}})
		size += n
		if !seen[t.Language] {
			seen[t.Language] = true
			langs = append(langs, t.Language)
		}
	}
	for _, c := range chunks {
		check := types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &s.Name, Key: msgKey,
			ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: values}}
		if ok, err := s.transactRevision(ctx, op, append(c, check)); err != nil || !ok {
			return err
		}
	}
	unames := map[string]string{"#ob": dynamo.AttrOutbox}
	for k, v := range names {
		unames[k] = v
	}
	uvalues := map[string]types.AttributeValue{}
	for k, v := range values {
		uvalues[k] = v
	}
	var set, add []string
	remove := []string{"#ob"}
	if len(langs) > 0 {
		unames["#tl"] = dynamo.AttrTranslatedLanguages
		uvalues[":langs"] = &types.AttributeValueMemberSS{Value: langs}
		add = append(add, "#tl :langs")
	}
	if len(ts) > 0 && ts[0].SourceLanguage != "" {
		// The language the translation function found (contract: the
		// original_language a view reports is the detected one).
		unames["#sl"] = "source_language"
		uvalues[":sl"] = dynamo.Str(ts[0].SourceLanguage)
		set = append(set, "#sl = :sl")
	}
	if finished {
		unames["#ps"], unames["#pd"], unames["#pa"], unames["#ta"] = dynamo.AttrPendingShard, dynamo.AttrPendingDue, dynamo.AttrPendingAttempts, dynamo.AttrTranslatedAt
		remove = append(remove, "#ps", "#pd", "#pa")
		// translated_at, set once per revision (an edit removes it), is
		// what the relay turns into message.translated (relaystore.ChangeFromImage).
		uvalues[":ta"] = dynamo.Str(time.Now().UTC().Format(time.RFC3339Nano))
		set = append(set, "#ta = if_not_exists(#ta, :ta)")
	}
	update := "REMOVE " + strings.Join(remove, ", ")
	if len(set) > 0 {
		update += " SET " + strings.Join(set, ", ")
	}
	if len(add) > 0 {
		update += " ADD " + strings.Join(add, ", ")
	}
	if len(chunk) == 0 {
		// The message's update alone (no translation to store with it): one
		// UpdateItem, half a one-item transaction's write units; retried
		// while it meets an edit's or a deletion's transaction.
		var err error
		for attempt := 0; ; attempt++ {
			_, err = s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name, Key: msgKey,
				ConditionExpression: aws.String(cond), UpdateExpression: aws.String(update),
				ExpressionAttributeNames: unames, ExpressionAttributeValues: uvalues})
			if !dynamo.AgainAfterConflict(ctx, err, attempt) {
				break
			}
		}
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return nil
		}
		return dynamo.Fail(op, err)
	}
	chunk = append(chunk, types.TransactWriteItem{Update: &types.Update{TableName: &s.Name, Key: msgKey,
		ConditionExpression: aws.String(cond), UpdateExpression: aws.String(update),
		ExpressionAttributeNames: unames, ExpressionAttributeValues: uvalues}})
	_, err := s.transactRevision(ctx, op, chunk)
	return err
}

// transactRevision runs items, whose last one carries the revision
// condition, retrying collisions with other transactions; it reports
// false when that condition failed.
func (s *Store) transactRevision(ctx context.Context, op string, items []types.TransactWriteItem) (bool, error) {
	for attempt := 0; ; attempt++ {
		_, err := s.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil {
			return true, nil
		}
		reasons := dynamo.Cancellation(err)
		switch {
		case reasons == nil:
			return false, dynamo.Fail(op, err)
		case dynamo.ConditionFailed(reasons, len(items)-1):
			return false, nil
		case dynamo.Throttled(reasons) && attempt >= 4:
			return false, chat.Unavailable(fmt.Errorf("dynamo: %s: transaction throttled (%s)", op, dynamo.ReasonCodes(reasons)))
		case !dynamo.Conflicted(reasons) && !dynamo.Throttled(reasons) || attempt >= 4:
			return false, dynamo.Fail(op, err)
		}
		backoff := time.Duration(10<<attempt)*time.Millisecond + time.Duration(rand.IntN(20))*time.Millisecond
		select {
		case <-ctx.Done():
			return false, dynamo.Fail(op, ctx.Err())
		case <-time.After(backoff):
		}
	}
}

// DeleteTranslations removes every stored translation of message id, of
// any revision, with one Query and one BatchWriteItem per 25 items: the
// outbox relay's work for a deleted message. Errors: EUnavailable.
func (s *Store) DeleteTranslations(ctx context.Context, id string) error {
	op := "delete translations of message " + id
	items, err := s.QueryAll(ctx, op, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :tr)"),
		ProjectionExpression:      aws.String("#pk, #sk"),
		ExpressionAttributeNames:  map[string]string{"#pk": dynamo.AttrPK, "#sk": dynamo.AttrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(dynamo.TranslationPK(id)), ":tr": dynamo.Str(dynamo.TranslationSK(""))},
	})
	if err != nil {
		return err
	}
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: dynamo.Key(dynamo.GetS(it, dynamo.AttrPK), dynamo.GetS(it, dynamo.AttrSK))}}
	}
	if len(reqs) == 0 {
		return nil
	}
	return s.BatchWrite(ctx, op, reqs)
}
