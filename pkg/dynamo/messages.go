package dynamo

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
)

// MessagePrefix starts the sort key of every message item; the outbox
// relay's stream filter and the guest list query both rely on it.
const MessagePrefix = "MSG#"

func MessageSK(id string) string     { return MessagePrefix + id }
func TranslationPK(id string) string { return "MSG#" + id }
func TranslationSK(lang string) string {
	return "TR#" + lang
}

// authorAttr is a message's author as stored.
type authorAttr struct {
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id,omitempty"`
	Name      string `dynamodbav:"name"`
	AvatarURL string `dynamodbav:"avatar_url,omitempty"`
	Language  string `dynamodbav:"language,omitempty"`
}

// AttrTranslatedLanguages is the message item's string set of the target
// codes its translations are stored under. Only the translation function
// writes it, with UpdateItem ADD: a MODIFY on the stream, which the outbox
// relay ignores (it forwards INSERTs only).
const AttrTranslatedLanguages = "translated_languages"

// The untranslated marker: two attributes of a message item that put it in
// the sparse index PendingTranslationIndex until the translation function
// has finished it (and removes them, in a MODIFY the relay ignores). Every
// writer of a message item gets them through messageItemOf, in the same
// write as the message, so a message can never be stored unmarked. The
// sweep (relay.Sweep) re-queues the marked messages that are due.
const (
	PendingIndex        = "PendingTranslationIndex"
	AttrPendingShard    = "pending_shard"
	AttrPendingDue      = "pending_due"
	AttrPendingAttempts = "pending_attempts"
	// PendingShards spreads the index's writes over partitions: one index
	// partition takes about 1,000 writes a second, a message writes its
	// marker twice (set, then removed), and a throttled index throttles the
	// table's writes: 64 shards take about 32,000 messages a second. Two
	// digits each (PENDING#00..63), so markers written under the earlier
	// 16 shards are still read.
	PendingShards = 64
	// StuckShard holds the markers the sweep gave up on, out of its
	// queries but still in the index for an operator to find.
	StuckShard = "PENDING#STUCK"
)

// PendingGrace is how long after it is written a message becomes due for
// the sweep: by then the relay and the queue normally have translated it
// (a job that keeps failing is received five times, 3 minutes apart, before
// the dead-letter queue takes it). It is also the sweep's first backoff.
const PendingGrace = 15 * time.Minute

// PendingShard is the index partition of message id.
func PendingShard(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return fmt.Sprintf("PENDING#%02d", h.Sum32()%PendingShards)
}

// PendingDue is the index sort key of a message due at t: time order, then
// the id.
func PendingDue(t time.Time, id string) string { return SortTime(t) + "#" + id }

// Attributes of an edited or deleted message item (docs/data-model.md).
const (
	AttrRevision  = "revision"
	AttrEditedAt  = "edited_at"
	AttrDeletedAt = "deleted_at"
	AttrDeletedBy = "deleted_by"
	// AttrOutbox names the change an edit or a deletion made
	// (OutboxEdited, OutboxDeleted): the stream's MODIFY that carries it
	// is the outbox record of that change (a new translation job,
	// message.updated or message.deleted). The translation function's
	// writes remove it, so that their MODIFYs are not taken for the edit
	// again.
	AttrOutbox   = "outbox"
	OutboxEdited = "edited"
	// AttrAttachments holds a message's attachments; AttrAttachmentKeys
	// the keys of files taken off it whose deletion is not confirmed.
	AttrAttachments    = "attachments"
	AttrAttachmentKeys = "attachment_keys"
	OutboxDeleted      = "deleted"
)

// OutboxOf returns the change (OutboxEdited, OutboxDeleted) that a stream
// record's new image of a message item reports, or "" for any other write.
func OutboxOf(image map[string]types.AttributeValue) string { return GetS(image, AttrOutbox) }

// RevisionCond is the condition that the item is at revision rev, adding
// its names and values: an item never edited has no revision attribute
// and is at revision 1.
func RevisionCond(names map[string]string, values map[string]types.AttributeValue, rev int) string {
	names["#rev"] = AttrRevision
	values[":ifrev"] = Num(int64(rev))
	if rev == 1 {
		return "(attribute_not_exists(#rev) OR #rev = :ifrev)"
	}
	return "#rev = :ifrev"
}

// AuthorValue is a as stored (a message's author, a deletion's deleted_by).
func AuthorValue(a chat.Author) (types.AttributeValue, error) {
	av, err := attributevalue.Marshal(authorAttr{Type: a.Type, ID: a.ID, Name: a.Name, AvatarURL: a.AvatarURL, Language: a.Language})
	if err != nil {
		return nil, chat.Internal(fmt.Errorf("dynamo: marshal author: %w", err))
	}
	return av, nil
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

// MessageItem is a message: pk CHAN#<channel>, sk MSG#<message>. Its
// INSERT on the table's stream is the outbox event that queues it for
// translation.
type MessageItem struct {
	PK              string     `dynamodbav:"pk"`
	SK              string     `dynamodbav:"sk"`
	ID              string     `dynamodbav:"id"`
	WorkspaceID     string     `dynamodbav:"workspace_id"`
	ChannelID       string     `dynamodbav:"channel_id"`
	Author          authorAttr `dynamodbav:"author"`
	Content         string     `dynamodbav:"content"`
	SourceLanguage  string     `dynamodbav:"source_language"`
	SkipTranslation bool       `dynamodbav:"skip_translation"`
	Status          string     `dynamodbav:"status"`
	CreatedAt       time.Time  `dynamodbav:"created_at"`
	// TranslatedLanguages is absent until a translation is stored (a set
	// cannot be empty).
	TranslatedLanguages []string `dynamodbav:"translated_languages,stringset,omitempty"`
	// PendingShard and PendingDue are the untranslated marker, absent on a
	// skip_translation message (nothing to finish) and once translated.
	PendingShard string `dynamodbav:"pending_shard,omitempty"`
	PendingDue   string `dynamodbav:"pending_due,omitempty"`
	// Revision, EditedAt, DeletedAt and DeletedBy are written by an edit
	// or a delete (pkg/dynamo/editstore); a message never edited has none of them.
	Revision  int         `dynamodbav:"revision,omitempty"`
	EditedAt  *time.Time  `dynamodbav:"edited_at,omitempty"`
	DeletedAt *time.Time  `dynamodbav:"deleted_at,omitempty"`
	DeletedBy *authorAttr `dynamodbav:"deleted_by,omitempty"`
	// Attachments are absent on a message without any (attachments.go).
	Attachments []attachmentAttr `dynamodbav:"attachments,omitempty"`
	// AttachmentKeys are the keys of files an edit or a deletion took off
	// the message and whose deletion is not confirmed yet (a string set,
	// absent when none: a set cannot be empty).
	AttachmentKeys []string `dynamodbav:"attachment_keys,stringset,omitempty"`
	// ThreadID is the root's id on a reply (and the partition key of
	// ThreadIndex, so only replies are in it); absent on a root.
	ThreadID string `dynamodbav:"thread_id,omitempty"`
	// ReplyCount and LastReplyAt are a root's thread, absent until its
	// first reply.
	ReplyCount  int        `dynamodbav:"reply_count,omitempty"`
	LastReplyAt *time.Time `dynamodbav:"last_reply_at,omitempty"`
	// ReactionEmoji (a list, in order of first use) and ReactionShards are
	// absent until the message's first reaction.
	ReactionEmoji  []string `dynamodbav:"reaction_emoji,omitempty"`
	ReactionShards int      `dynamodbav:"reaction_shards,omitempty"`
}

// Attributes of threads and reactions on a message item.
const (
	AttrThreadID       = "thread_id"
	AttrReplyCount     = "reply_count"
	AttrLastReplyAt    = "last_reply_at"
	AttrReactionEmoji  = "reaction_emoji"
	AttrReactionShards = "reaction_shards"
	// ThreadIndex is the sparse index of replies: partition key thread_id
	// (the root's id), sort key sk (MSG#<reply id>), projecting all.
	ThreadIndex = "ThreadIndex"
)

// MessageItemOf returns the item of a new message, marked untranslated
// unless it skips translation.
func MessageItemOf(m chat.Message) MessageItem {
	it := MessageItem{
		PK: ChanPK(m.ChannelID), SK: MessageSK(m.ID), ID: m.ID, WorkspaceID: m.WorkspaceID, ChannelID: m.ChannelID,
		Author:  authorAttr{Type: m.Author.Type, ID: m.Author.ID, Name: m.Author.Name, AvatarURL: m.Author.AvatarURL, Language: m.Author.Language},
		Content: m.Content, SourceLanguage: m.SourceLanguage, SkipTranslation: m.SkipTranslation,
		Status: m.Status, CreatedAt: m.CreatedAt, TranslatedLanguages: m.TranslatedLanguages,
		Attachments: attachmentAttrsOf(m.Attachments), ThreadID: m.ThreadID,
	}
	if !m.SkipTranslation {
		it.PendingShard, it.PendingDue = PendingShard(m.ID), PendingDue(m.CreatedAt.Add(PendingGrace), m.ID)
	}
	return it
}

func (it MessageItem) Message() chat.Message {
	return chat.Message{
		ID: it.ID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID,
		Author:  chat.Author{Type: it.Author.Type, ID: it.Author.ID, Name: it.Author.Name, AvatarURL: it.Author.AvatarURL, Language: it.Author.Language},
		Content: it.Content, SourceLanguage: it.SourceLanguage, SkipTranslation: it.SkipTranslation,
		Status: it.Status, CreatedAt: it.CreatedAt, TranslatedLanguages: it.TranslatedLanguages,
		Revision: it.Revision, EditedAt: timeOr(it.EditedAt), DeletedAt: timeOr(it.DeletedAt), DeletedBy: it.DeletedBy.author(),
		Attachments: attachmentsOf(it.Attachments), DroppedKeys: it.AttachmentKeys,
		ThreadID: it.ThreadID, ReplyCount: it.ReplyCount, LastReplyAt: timeOr(it.LastReplyAt),
		ReactionEmoji: it.ReactionEmoji, ReactionShards: it.ReactionShards,
	}
}

// TranslationItem is one translation of a message: pk MSG#<message>,
// sk TR#<target language>.
type TranslationItem struct {
	PK             string    `dynamodbav:"pk"`
	SK             string    `dynamodbav:"sk"`
	MessageID      string    `dynamodbav:"message_id"`
	Language       string    `dynamodbav:"language"`
	Content        string    `dynamodbav:"content"`
	SourceLanguage string    `dynamodbav:"source_language"`
	CreatedAt      time.Time `dynamodbav:"created_at"`
	// Untranslated, when set, says why content is the original text.
	Untranslated string `dynamodbav:"untranslated,omitempty"`
	// Revision is the message revision translated; absent for revision 1
	// written before edits existed.
	Revision int `dynamodbav:"revision,omitempty"`
	// AltTexts are the translated alt texts of the message's attachments,
	// parallel to them ("" for one not translated); absent when none was,
	// and on items written before attachments existed.
	AltTexts []string `dynamodbav:"alt_texts,omitempty"`
}

// TranslationItemOf returns the item of translation t of revision rev.
func TranslationItemOf(t chat.Translation, rev int) TranslationItem {
	return TranslationItem{
		PK: TranslationPK(t.MessageID), SK: TranslationSK(t.Language), MessageID: t.MessageID,
		Language: t.Language, Content: t.Content, SourceLanguage: t.SourceLanguage, CreatedAt: t.CreatedAt,
		Untranslated: t.Untranslated, Revision: rev, AltTexts: t.AltTexts,
	}
}

// Translation returns the translation the item holds.
func (it TranslationItem) Translation() chat.Translation {
	return chat.Translation{MessageID: it.MessageID, Language: it.Language, Content: it.Content, SourceLanguage: it.SourceLanguage,
		CreatedAt: it.CreatedAt, Untranslated: it.Untranslated, Revision: it.Revision, AltTexts: it.AltTexts}
}

// TranslationBatch is BatchGetItem's limit of keys per call.
const TranslationBatch = 100

// PutMessage implements rooms.MessageWriter with one PutItem. The item's
// INSERT on the table's stream is what queues the message for translation.
// A PutItem whose answer was lost after it committed (a timeout, an HTTP
// 500) is sent again by the SDK and meets the item it stored: that is m's
// own write (OwnMessage), and succeeds. Errors: EConflict when another
// message with m's id exists in its channel; EUnavailable when DynamoDB
// failed after retries.
func (s *Table) PutMessage(ctx context.Context, m chat.Message) error {
	if len(m.Attachments) > 0 || m.ThreadID != "" {
		return s.putWithClaims(ctx, m)
	}
	put := MessagePut(s.Name, m).Put
	_, err := s.Client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           put.TableName,
		Item:                                put.Item,
		ConditionExpression:                 put.ConditionExpression,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if OwnMessage(ccf.Item, m) {
			return nil
		}
		return chat.Errorf(chat.EConflict, "message %s exists", m.ID)
	}
	return Fail("put message "+m.ID, err)
}

// MessagePut is the write of new message m in a transaction: on condition
// that no item holds its key, returning the one that does when it fails
// (ALL_OLD), for OwnMessage to tell a retry of this very write from
// another message.
func MessagePut(table string, m chat.Message) types.TransactWriteItem {
	put := Put(table, MessageItemOf(m), "attribute_not_exists(pk)", nil)
	put.Put.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	return put
}

// OwnMessage reports whether stored, the item that refused the write of new
// message m (its old image), is m as that write stored it: the same id,
// workspace, channel, author and creation time (to the nanosecond), and the
// same content unless it was edited or deleted since. Only a retry of m's
// own write meets it (the SDK resends a write whose answer was lost, though
// it committed): an id is made once (chat.IDs), and no other post shares
// m's author and instant besides.
func OwnMessage(stored map[string]types.AttributeValue, m chat.Message) bool {
	if len(stored) == 0 {
		return false
	}
	var it MessageItem
	if err := attributevalue.UnmarshalMap(stored, &it); err != nil {
		return false
	}
	same := it.ID == m.ID && it.WorkspaceID == m.WorkspaceID && it.ChannelID == m.ChannelID &&
		it.Author.Type == m.Author.Type && it.Author.ID == m.Author.ID && it.CreatedAt.Equal(m.CreatedAt)
	changed := it.Revision > 1 || it.DeletedAt != nil
	return same && (changed || it.Content == m.Content && it.SkipTranslation == m.SkipTranslation)
}

// putWithClaims stores m, claims its attachments' uploads (ClaimWrites)
// and counts a reply on its root (ThreadWrite) in one TransactWriteItems
// (TransactPost). Errors: those of PutMessage; an *attachments.ClaimError
// when an upload cannot be attached; EValidation on "thread_id" when the
// root refuses the reply.
func (s *Table) putWithClaims(ctx context.Context, m chat.Message) error {
	reasons, err := s.TransactPost(ctx, "put message "+m.ID, m, func(root *types.TransactWriteItem) ([]types.TransactWriteItem, int, int) {
		// The claims are judged at the post's own time, the clock that
		// dated the uploads.
		items := append([]types.TransactWriteItem{MessagePut(s.Name, m)}, ClaimWrites(s.Name, m, m.CreatedAt)...)
		if root == nil {
			return items, 0, -1
		}
		return append(items, *root), 0, len(items)
	})
	switch {
	case chat.IsCode(err, chat.EConflict):
		// Only this post writes its message and uploads: a collision is
		// another post's claim of the same upload, or another reply to the
		// same root, still in flight.
		return chat.Unavailable(err)
	case err != nil:
		return err
	case reasons == nil:
		return nil
	case ConditionFailed(reasons, 0) && OwnMessage(reasons[0].Item, m):
		return nil
	case ConditionFailed(reasons, 0):
		return chat.Errorf(chat.EConflict, "message %s exists", m.ID)
	}
	if err := ClaimFailure(reasons, 1, m); err != nil {
		return err
	}
	return chat.Internal(fmt.Errorf("dynamo: put message %s cancelled for an unexpected reason: %s", m.ID, ReasonCodes(reasons)))
}
