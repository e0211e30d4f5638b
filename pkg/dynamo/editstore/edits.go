package editstore

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
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/edits"
)

var _ edits.Store = (*Store)(nil)

// ownerCond is the condition that the item is a message of c's workspace
// (and, unless c.AnyAuthor, of c's actor), not deleted.
func ownerCond(c edits.Change, names map[string]string, values map[string]types.AttributeValue) string {
	names["#pk"], names["#ws"], names["#del"] = dynamo.AttrPK, "workspace_id", dynamo.AttrDeletedAt
	values[":ws"] = dynamo.Str(c.Actor.WorkspaceID)
	cond := "attribute_exists(#pk) AND #ws = :ws AND attribute_not_exists(#del)"
	if !c.AnyAuthor {
		names["#au"], names["#at"], names["#aid"] = "author", "type", "id"
		values[":at"], values[":aid"] = dynamo.Str(c.Actor.Type), dynamo.Str(c.Actor.ID)
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
// only). With c.SetAttachments the write sets the attachments and holds at
// revision c.Base instead of on a content change; with c.Claims it is one
// TransactWriteItems with their uploads' claims (dynamo.ClaimWrites), and
// old is the zero Message when it applied. Errors: EUnavailable; an
// *attachments.ClaimError when an upload cannot be attached.
func (s *Store) EditMessage(ctx context.Context, c edits.Change) (chat.Message, bool, bool, error) {
	m, applied, found, err := s.edit(ctx, c, true)
	if err == nil && !applied && found && m.SkipTranslation {
		m, applied, found, err = s.edit(ctx, c, false)
	}
	return m, applied, found, err
}

func (s *Store) edit(ctx context.Context, c edits.Change, mark bool) (chat.Message, bool, bool, error) {
	names := map[string]string{"#c": "content", "#ed": dynamo.AttrEditedAt, "#ob": dynamo.AttrOutbox, "#skip": "skip_translation",
		"#tl": dynamo.AttrTranslatedLanguages, "#ta": dynamo.AttrTranslatedAt, "#pa": dynamo.AttrPendingAttempts}
	values := map[string]types.AttributeValue{":c": dynamo.Str(c.Content), ":now": dynamo.Str(c.Now.Format(time.RFC3339Nano)),
		":one": dynamo.Num(1), ":ob": dynamo.Str(dynamo.OutboxEdited), ":skip": &types.AttributeValueMemberBOOL{Value: !mark}}
	cond := ownerCond(c, names, values) + " AND #skip = :skip"
	switch {
	case c.SetAttachments:
		// The attachments were decided on revision c.Base as read: only
		// that revision may take them (an edit's revision guards its
		// attachments, which only edits change).
		cond += " AND " + dynamo.RevisionCond(names, values, c.Base)
	default:
		cond += " AND #c <> :c"
		if c.IfMatch != 0 {
			cond += " AND " + dynamo.RevisionCond(names, values, c.IfMatch)
		}
	}
	names["#rev"] = dynamo.AttrRevision
	update := "SET #c = :c, #rev = if_not_exists(#rev, :one) + :one, #ed = :now, #ob = :ob"
	remove := " REMOVE #tl, #ta, #pa"
	if mark {
		names["#ps"], names["#pd"] = dynamo.AttrPendingShard, dynamo.AttrPendingDue
		values[":ps"], values[":pd"] = dynamo.Str(dynamo.PendingShard(c.MessageID)), dynamo.Str(dynamo.PendingDue(c.Now.Add(dynamo.PendingGrace), c.MessageID))
		update += ", #ps = :ps, #pd = :pd"
	} else {
		names["#ps"], names["#pd"] = dynamo.AttrPendingShard, dynamo.AttrPendingDue
		remove += ", #ps, #pd"
	}
	if c.SetAttachments {
		names["#att"] = dynamo.AttrAttachments
		if len(c.Attachments) > 0 {
			av, err := dynamo.AttachmentsValue(c.Attachments)
			if err != nil {
				return chat.Message{}, false, false, err
			}
			values[":att"] = av
			update += ", #att = :att"
		} else {
			remove += ", #att"
		}
	}
	add := droppedKeys(c.Dropped, names, values)
	key := dynamo.Key(dynamo.ChanPK(c.ChannelID), dynamo.MessageSK(c.MessageID))
	if len(c.Claims) > 0 {
		return s.editWithClaims(ctx, c, &types.Update{TableName: &s.Name, Key: key, ConditionExpression: aws.String(cond),
			UpdateExpression: aws.String(update + remove + add), ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	}
	return s.conditionalUpdate(ctx, "edit message "+c.MessageID, &dynamodb.UpdateItemInput{
		TableName: &s.Name, Key: key,
		ConditionExpression: aws.String(cond), UpdateExpression: aws.String(update + remove + add),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	})
}

// droppedKeys is the ADD clause that records keys in the item's
// attachment_keys, "" for none: a set, so that a later deletion of some
// keys (ClearDroppedKeys) leaves those another write added.
func droppedKeys(keys []string, names map[string]string, values map[string]types.AttributeValue) string {
	if len(keys) == 0 {
		return ""
	}
	names["#ak"] = dynamo.AttrAttachmentKeys
	values[":ak"] = &types.AttributeValueMemberSS{Value: keys}
	return " ADD #ak :ak"
}

// editWithClaims writes the edit's update and the claims of c.Claims'
// uploads in one TransactWriteItems (dynamo.Transact retries a collision
// with the translation function's save). A failed message condition
// returns the message as it is (ALL_OLD); a failed claim an
// *attachments.ClaimError.
func (s *Store) editWithClaims(ctx context.Context, c edits.Change, up *types.Update) (chat.Message, bool, bool, error) {
	op := "edit message " + c.MessageID + " (attachments)"
	m := chat.Message{ID: c.MessageID, ChannelID: c.ChannelID, Author: chat.Author{Type: c.Actor.Type, ID: c.Actor.ID},
		Attachments: c.Claims}
	items := append([]types.TransactWriteItem{{Update: up}}, dynamo.ClaimWrites(s.Name, m, c.Now)...)
	rounds := 0
	if len(c.Claims) > 0 {
		rounds = dynamo.ClaimRounds
	}
	reasons, err := s.TransactClaims(ctx, op, items, rounds)
	switch {
	case chat.IsCode(err, chat.EConflict):
		// A collision that outlasted the retries: another write of the
		// message or of an upload, still in flight.
		return chat.Message{}, false, false, chat.Unavailable(err)
	case err != nil:
		return chat.Message{}, false, false, err
	case reasons == nil:
		return chat.Message{}, true, true, nil
	case dynamo.ConditionFailed(reasons, 0):
		return oldOf(op, reasons[0].Item)
	}
	if err := dynamo.ClaimFailure(reasons, 1, m); err != nil {
		return chat.Message{}, false, false, err
	}
	return chat.Message{}, false, false, chat.Unavailable(fmt.Errorf("dynamo: %s: cancelled (%s)", op, dynamo.ReasonCodes(reasons)))
}

// oldOf is a refused write's answer from the item as it is (none when
// there is no such message).
func oldOf(op string, item map[string]types.AttributeValue) (chat.Message, bool, bool, error) {
	if len(item) == 0 {
		return chat.Message{}, false, false, nil
	}
	var it dynamo.MessageItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return chat.Message{}, false, false, chat.Internal(fmt.Errorf("dynamo: %s: %w", op, err))
	}
	return it.Message(), false, true, nil
}

// Message implements edits.Store with one consistent GetItem.
func (s *Store) Message(ctx context.Context, channelID, messageID string) (chat.Message, bool, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name,
		Key: dynamo.Key(dynamo.ChanPK(channelID), dynamo.MessageSK(messageID)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return chat.Message{}, false, dynamo.Fail("get message "+messageID, err)
	}
	m, _, found, err := oldOf("get message "+messageID, out.Item)
	return m, found, err
}

// ClearDroppedKeys implements edits.Store with one UpdateItem that deletes
// keys from the message's attachment_keys (the set's attribute goes with
// its last key). It removes the outbox attribute too, as the translation
// function's writes do, so that its stream record is not taken for the
// edit or deletion again. A message that is gone is not an error.
func (s *Store) ClearDroppedKeys(ctx context.Context, channelID, messageID string, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name,
		Key:                       dynamo.Key(dynamo.ChanPK(channelID), dynamo.MessageSK(messageID)),
		ConditionExpression:       aws.String("attribute_exists(#pk)"),
		UpdateExpression:          aws.String("DELETE #ak :ak REMOVE #ob"),
		ExpressionAttributeNames:  map[string]string{"#pk": dynamo.AttrPK, "#ak": dynamo.AttrAttachmentKeys, "#ob": dynamo.AttrOutbox},
		ExpressionAttributeValues: map[string]types.AttributeValue{":ak": &types.AttributeValueMemberSS{Value: keys}},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil
	}
	return dynamo.Fail("clear attachment keys of message "+messageID, err)
}

// DeleteMessage implements edits.Store with one UpdateItem, as
// EditMessage: it removes the content, the translated languages, the
// untranslated marker and the translated_at of the message, and sets
// deleted_at and deleted_by. Without c.Base it holds only for a message
// without attachments or attachment_keys; with it, at revision c.Base, and it removes the
// attachments and adds c.Dropped to attachment_keys. Errors: EUnavailable.
func (s *Store) DeleteMessage(ctx context.Context, c edits.Change) (chat.Message, bool, bool, error) {
	names := map[string]string{"#c": "content", "#by": dynamo.AttrDeletedBy, "#ob": dynamo.AttrOutbox,
		"#tl": dynamo.AttrTranslatedLanguages, "#ta": dynamo.AttrTranslatedAt, "#pa": dynamo.AttrPendingAttempts,
		"#ps": dynamo.AttrPendingShard, "#pd": dynamo.AttrPendingDue}
	by, err := dynamo.AuthorValue(chat.Author{Type: c.Actor.Type, ID: c.Actor.ID, Name: c.Actor.Name})
	if err != nil {
		return chat.Message{}, false, false, err
	}
	values := map[string]types.AttributeValue{":now": dynamo.Str(c.Now.Format(time.RFC3339Nano)), ":by": by, ":ob": dynamo.Str(dynamo.OutboxDeleted)}
	cond := ownerCond(c, names, values)
	key := dynamo.Key(dynamo.ChanPK(c.ChannelID), dynamo.MessageSK(c.MessageID))
	names["#att"] = dynamo.AttrAttachments
	update := "SET #del = :now, #by = :by, #ob = :ob REMOVE #c, #tl, #ta, #pa, #ps, #pd, #att"
	if c.Base == 0 {
		// The common case, one write: a message without files. One with
		// files is refused, and written again with its keys (c.Base).
		names["#ak"] = dynamo.AttrAttachmentKeys
		cond += " AND attribute_not_exists(#att) AND attribute_not_exists(#ak)"
	} else {
		cond += " AND " + dynamo.RevisionCond(names, values, c.Base)
	}
	update += droppedKeys(c.Dropped, names, values)
	if c.Audit != nil {
		return s.auditedDelete(ctx, c, key, cond, update, names, values)
	}
	return s.conditionalUpdate(ctx, "delete message "+c.MessageID, &dynamodb.UpdateItemInput{
		TableName: &s.Name, Key: key,
		ConditionExpression:      aws.String(cond),
		UpdateExpression:         aws.String(update),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	})
}

// auditedDelete is DeleteMessage with c.Audit: one TransactWriteItems of
// the message's UpdateItem, on the further condition that the message is
// not c.Actor's own, and the audit event's Put (dynamo.Transact retries a
// collision with the translation function's save). When the condition
// fails, the message as it is comes with the cancellation (ALL_OLD).
func (s *Store) auditedDelete(ctx context.Context, c edits.Change, key map[string]types.AttributeValue, cond, update string,
	names map[string]string, values map[string]types.AttributeValue) (chat.Message, bool, bool, error) {
	names["#au"], names["#at"], names["#aid"] = "author", "type", "id"
	values[":at"], values[":aid"] = dynamo.Str(c.Actor.Type), dynamo.Str(c.Actor.ID)
	cond += " AND NOT (#au.#at = :at AND #au.#aid = :aid)"
	op := "delete message " + c.MessageID + " (audited)"
	reasons, err := s.Transact(ctx, op, []types.TransactWriteItem{
		{Update: &types.Update{TableName: &s.Name, Key: key, ConditionExpression: aws.String(cond), UpdateExpression: aws.String(update),
			ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		dynamo.AuditPut(s.Name, *c.Audit),
	})
	if err != nil {
		return chat.Message{}, false, false, err
	}
	if reasons == nil {
		return chat.Message{}, true, true, nil
	}
	if !dynamo.ConditionFailed(reasons, 0) {
		return chat.Message{}, false, false, chat.Unavailable(fmt.Errorf("dynamo: %s: cancelled (%s)", op, dynamo.ReasonCodes(reasons)))
	}
	// The cancellation carries the item as it is (ALL_OLD); none when
	// there is no such message.
	return oldOf(op, reasons[0].Item)
}

// conditionalUpdate runs in and returns the item as it was before, whether
// in's write happened, and whether the item exists. A write that meets the
// translation function's save of the message (a transaction on the item)
// goes again (dynamo.AgainAfterConflict).
func (s *Store) conditionalUpdate(ctx context.Context, op string, in *dynamodb.UpdateItemInput) (chat.Message, bool, bool, error) {
	in.ReturnValues = types.ReturnValueAllOld
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	var out *dynamodb.UpdateItemOutput
	var err error
	for attempt := 0; ; attempt++ {
		out, err = s.Client.UpdateItem(ctx, in)
		if !dynamo.AgainAfterConflict(ctx, err, attempt) {
			break
		}
	}
	item, applied := map[string]types.AttributeValue(nil), err == nil
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		item = ccf.Item
	case err != nil:
		return chat.Message{}, false, false, dynamo.Fail(op, err)
	default:
		item = out.Attributes
	}
	if len(item) == 0 {
		return chat.Message{}, applied, false, nil
	}
	var it dynamo.MessageItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return chat.Message{}, false, false, chat.Internal(fmt.Errorf("dynamo: %s: %w", op, err))
	}
	return it.Message(), applied, true, nil
}
