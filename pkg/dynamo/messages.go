package dynamo

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
)

// messagePrefix starts the sort key of every message item; the outbox
// relay's stream filter and the guest list query both rely on it.
const messagePrefix = "MSG#"

func messageSK(id string) string     { return messagePrefix + id }
func translationPK(id string) string { return "MSG#" + id }
func translationSK(lang string) string {
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

// attrTranslatedLanguages is the message item's string set of the target
// codes its translations are stored under. Only the translation function
// writes it, with UpdateItem ADD: a MODIFY on the stream, which the outbox
// relay ignores (it forwards INSERTs only).
const attrTranslatedLanguages = "translated_languages"

// The untranslated marker: two attributes of a message item that put it in
// the sparse index PendingTranslationIndex until the translation function
// has finished it (and removes them, in a MODIFY the relay ignores). Every
// writer of a message item gets them through messageItemOf, in the same
// write as the message, so a message can never be stored unmarked. The
// sweep (relay.Sweep) re-queues the marked messages that are due.
const (
	pendingIndex        = "PendingTranslationIndex"
	attrPendingShard    = "pending_shard"
	attrPendingDue      = "pending_due"
	attrPendingAttempts = "pending_attempts"
	// pendingShards spreads the index's writes over partitions: one index
	// partition takes about 1,000 writes a second, and a throttled index
	// throttles the table's writes.
	pendingShards = 16
	// stuckShard holds the markers the sweep gave up on, out of its
	// queries but still in the index for an operator to find.
	stuckShard = "PENDING#STUCK"
)

// PendingGrace is how long after it is written a message becomes due for
// the sweep: by then the relay and the queue normally have translated it
// (a job that keeps failing is received five times, 3 minutes apart, before
// the dead-letter queue takes it). It is also the sweep's first backoff.
const PendingGrace = 15 * time.Minute

// pendingShard is the index partition of message id.
func pendingShard(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return fmt.Sprintf("PENDING#%02d", h.Sum32()%pendingShards)
}

// pendingDue is the index sort key of a message due at t: time order, then
// the id.
func pendingDue(t time.Time, id string) string { return sortTime(t) + "#" + id }

// messageItem is a message: pk CHAN#<channel>, sk MSG#<message>. Its
// INSERT on the table's stream is the outbox event that queues it for
// translation.
type messageItem struct {
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
	// or a delete (edits.go); a message never edited has none of them.
	Revision  int         `dynamodbav:"revision,omitempty"`
	EditedAt  *time.Time  `dynamodbav:"edited_at,omitempty"`
	DeletedAt *time.Time  `dynamodbav:"deleted_at,omitempty"`
	DeletedBy *authorAttr `dynamodbav:"deleted_by,omitempty"`
}

// messageItemOf returns the item of a new message, marked untranslated
// unless it skips translation.
func messageItemOf(m chat.Message) messageItem {
	it := messageItem{
		PK: chanPK(m.ChannelID), SK: messageSK(m.ID), ID: m.ID, WorkspaceID: m.WorkspaceID, ChannelID: m.ChannelID,
		Author:  authorAttr{Type: m.Author.Type, ID: m.Author.ID, Name: m.Author.Name, AvatarURL: m.Author.AvatarURL, Language: m.Author.Language},
		Content: m.Content, SourceLanguage: m.SourceLanguage, SkipTranslation: m.SkipTranslation,
		Status: m.Status, CreatedAt: m.CreatedAt, TranslatedLanguages: m.TranslatedLanguages,
	}
	if !m.SkipTranslation {
		it.PendingShard, it.PendingDue = pendingShard(m.ID), pendingDue(m.CreatedAt.Add(PendingGrace), m.ID)
	}
	return it
}

func (it messageItem) message() chat.Message {
	return chat.Message{
		ID: it.ID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID,
		Author:  chat.Author{Type: it.Author.Type, ID: it.Author.ID, Name: it.Author.Name, AvatarURL: it.Author.AvatarURL, Language: it.Author.Language},
		Content: it.Content, SourceLanguage: it.SourceLanguage, SkipTranslation: it.SkipTranslation,
		Status: it.Status, CreatedAt: it.CreatedAt, TranslatedLanguages: it.TranslatedLanguages,
		Revision: it.Revision, EditedAt: timeOr(it.EditedAt), DeletedAt: timeOr(it.DeletedAt), DeletedBy: it.DeletedBy.author(),
	}
}

// translationItem is one translation of a message: pk MSG#<message>,
// sk TR#<target language>.
type translationItem struct {
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
}
