package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/edits"
	"github.com/chatbridge/chat/pkg/webhooks"
)

var _ edits.Store = (*Store)(nil)

// Attributes of an edited or deleted message item (docs/data-model.md).
const (
	attrRevision  = "revision"
	attrEditedAt  = "edited_at"
	attrDeletedAt = "deleted_at"
	attrDeletedBy = "deleted_by"
	// attrOutbox names the change an edit or a deletion made ("edited",
	// "deleted"): the stream's MODIFY that carries it is the outbox record
	// of that change (a new translation job, message.updated or
	// message.deleted). The translation function's writes remove it, so
	// that their MODIFYs are not taken for the edit again.
	attrOutbox    = "outbox"
	OutboxEdited  = "edited"
	OutboxDeleted = "deleted"
)

// revisionCond is the condition that the item is at revision rev: an item
// never edited has no revision attribute and is at revision 1.
func revisionCond(names map[string]string, values map[string]types.AttributeValue, rev int) string {
	names["#rev"] = attrRevision
	values[":ifrev"] = num(int64(rev))
	if rev == 1 {
		return "(attribute_not_exists(#rev) OR #rev = :ifrev)"
	}
	return "#rev = :ifrev"
}

// ownerCond is the condition that the item is a message of c's workspace
// (and, unless c.AnyAuthor, of c's actor), not deleted.
func ownerCond(c edits.Change, names map[string]string, values map[string]types.AttributeValue) string {
	names["#pk"], names["#ws"], names["#del"] = attrPK, "workspace_id", attrDeletedAt
	values[":ws"] = str(c.Actor.WorkspaceID)
	cond := "attribute_exists(#pk) AND #ws = :ws AND attribute_not_exists(#del)"
	if !c.AnyAuthor {
		names["#au"], names["#at"], names["#aid"] = "author", "type", "id"
		values[":at"], values[":aid"] = str(c.Actor.Type), str(c.Actor.ID)
		cond += " AND #au.#at = :at AND #au.#aid = :aid"
	}
	return cond
}

// EditMessage implements edits.Store with one UpdateItem that returns the
// item as it was, whether the write happened (ReturnValues) or its
// condition failed (ReturnValuesOnConditionCheckFailure). The new revision
// gets the untranslated marker unless the message skips translation: the
// write is conditioned on skip_translation being false, and a message that
// skips it is written again without the marker (a second call, for those
// only). Errors: EUnavailable.
func (s *Store) EditMessage(ctx context.Context, c edits.Change) (chat.Message, bool, bool, error) {
	m, applied, found, err := s.edit(ctx, c, true)
	if err == nil && !applied && found && m.SkipTranslation {
		m, applied, found, err = s.edit(ctx, c, false)
	}
	return m, applied, found, err
}

func (s *Store) edit(ctx context.Context, c edits.Change, mark bool) (chat.Message, bool, bool, error) {
	names := map[string]string{"#c": "content", "#ed": attrEditedAt, "#ob": attrOutbox, "#skip": "skip_translation",
		"#tl": attrTranslatedLanguages, "#ta": attrTranslatedAt, "#pa": attrPendingAttempts}
	values := map[string]types.AttributeValue{":c": str(c.Content), ":now": str(c.Now.Format(time.RFC3339Nano)),
		":one": num(1), ":ob": str(OutboxEdited), ":skip": &types.AttributeValueMemberBOOL{Value: !mark}}
	cond := ownerCond(c, names, values) + " AND #c <> :c AND #skip = :skip"
	if c.IfMatch != 0 {
		cond += " AND " + revisionCond(names, values, c.IfMatch)
	}
	names["#rev"] = attrRevision
	update := "SET #c = :c, #rev = if_not_exists(#rev, :one) + :one, #ed = :now, #ob = :ob"
	remove := " REMOVE #tl, #ta, #pa"
	if mark {
		names["#ps"], names["#pd"] = attrPendingShard, attrPendingDue
		values[":ps"], values[":pd"] = str(pendingShard(c.MessageID)), str(pendingDue(c.Now.Add(PendingGrace), c.MessageID))
		update += ", #ps = :ps, #pd = :pd"
	} else {
		names["#ps"], names["#pd"] = attrPendingShard, attrPendingDue
		remove += ", #ps, #pd"
	}
	return s.conditionalUpdate(ctx, "edit message "+c.MessageID, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: key(chanPK(c.ChannelID), messageSK(c.MessageID)),
		ConditionExpression: aws.String(cond), UpdateExpression: aws.String(update + remove),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	})
}

// DeleteMessage implements edits.Store with one UpdateItem, as
// EditMessage: it removes the content, the translated languages, the
// untranslated marker and the translated_at of the message, and sets
// deleted_at and deleted_by. Errors: EUnavailable.
func (s *Store) DeleteMessage(ctx context.Context, c edits.Change) (chat.Message, bool, bool, error) {
	names := map[string]string{"#c": "content", "#by": attrDeletedBy, "#ob": attrOutbox,
		"#tl": attrTranslatedLanguages, "#ta": attrTranslatedAt, "#pa": attrPendingAttempts,
		"#ps": attrPendingShard, "#pd": attrPendingDue}
	by, err := attributevalue.Marshal(authorAttr{Type: c.Actor.Type, ID: c.Actor.ID, Name: c.Actor.Name})
	if err != nil {
		return chat.Message{}, false, false, chat.Internal(fmt.Errorf("dynamo: marshal deleted_by: %w", err))
	}
	values := map[string]types.AttributeValue{":now": str(c.Now.Format(time.RFC3339Nano)), ":by": by, ":ob": str(OutboxDeleted)}
	cond := ownerCond(c, names, values)
	return s.conditionalUpdate(ctx, "delete message "+c.MessageID, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: key(chanPK(c.ChannelID), messageSK(c.MessageID)),
		ConditionExpression:      aws.String(cond),
		UpdateExpression:         aws.String("SET #del = :now, #by = :by, #ob = :ob REMOVE #c, #tl, #ta, #pa, #ps, #pd"),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	})
}

// conditionalUpdate runs in and returns the item as it was before, whether
// in's write happened, and whether the item exists.
func (s *Store) conditionalUpdate(ctx context.Context, op string, in *dynamodb.UpdateItemInput) (chat.Message, bool, bool, error) {
	in.ReturnValues = types.ReturnValueAllOld
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	out, err := s.db.UpdateItem(ctx, in)
	item, applied := map[string]types.AttributeValue(nil), err == nil
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		item = ccf.Item
	case err != nil:
		return chat.Message{}, false, false, fail(op, err)
	default:
		item = out.Attributes
	}
	if len(item) == 0 {
		return chat.Message{}, applied, false, nil
	}
	var it messageItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return chat.Message{}, false, false, chat.Internal(fmt.Errorf("dynamo: %s: %w", op, err))
	}
	return it.message(), applied, true, nil
}

// Audit implements edits.Store with one PutItem of the audit event.
// Errors: EUnavailable.
func (s *Store) Audit(ctx context.Context, ev webhooks.AuditEvent) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: s.auditPut(ev).Put.Item})
	return fail("audit "+ev.Action+" "+ev.TargetID, err)
}

// DeleteTranslations removes every stored translation of message id, of
// any revision, with one Query and one BatchWriteItem per 25 items: the
// outbox relay's work for a deleted message. Errors: EUnavailable.
func (s *Store) DeleteTranslations(ctx context.Context, id string) error {
	op := "delete translations of message " + id
	items, err := s.queryAll(ctx, op, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :tr)"),
		ProjectionExpression:      aws.String("#pk, #sk"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(translationPK(id)), ":tr": str(translationSK(""))},
	})
	if err != nil {
		return err
	}
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key(getS(it, attrPK), getS(it, attrSK))}}
	}
	if len(reqs) == 0 {
		return nil
	}
	return s.batchWrite(ctx, op, reqs)
}

// timeOr returns *t, or the zero time for nil.
func timeOr(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// author returns the stored author, or the zero author for nil.
func (a *authorAttr) author() chat.Author {
	if a == nil {
		return chat.Author{}
	}
	return chat.Author{Type: a.Type, ID: a.ID, Name: a.Name, AvatarURL: a.AvatarURL, Language: a.Language}
}

// RewriteLog implements inbound.LogRewriter with one PutItem that replaces
// record rec.ID (written before its request's outcome was known).
// Errors: EUnavailable.
func (s *Store) RewriteLog(ctx context.Context, rec chat.RequestLog) error {
	av, err := attributevalue.MarshalMap(requestLogItemOf(rec))
	if err != nil {
		return chat.Internal(err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: av})
	return fail("rewrite request log "+rec.ID, err)
}

// OutboxOf returns the change (OutboxEdited, OutboxDeleted) that a stream
// record's new image of a message item reports, or "" for any other write.
func OutboxOf(image map[string]types.AttributeValue) string { return getS(image, attrOutbox) }
