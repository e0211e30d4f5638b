package dynamo

import (
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
}

func messageItemOf(m chat.Message) messageItem {
	return messageItem{
		PK: chanPK(m.ChannelID), SK: messageSK(m.ID), ID: m.ID, WorkspaceID: m.WorkspaceID, ChannelID: m.ChannelID,
		Author:  authorAttr{Type: m.Author.Type, ID: m.Author.ID, Name: m.Author.Name, AvatarURL: m.Author.AvatarURL, Language: m.Author.Language},
		Content: m.Content, SourceLanguage: m.SourceLanguage, SkipTranslation: m.SkipTranslation,
		Status: m.Status, CreatedAt: m.CreatedAt, TranslatedLanguages: m.TranslatedLanguages,
	}
}

func (it messageItem) message() chat.Message {
	return chat.Message{
		ID: it.ID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID,
		Author:  chat.Author{Type: it.Author.Type, ID: it.Author.ID, Name: it.Author.Name, AvatarURL: it.Author.AvatarURL, Language: it.Author.Language},
		Content: it.Content, SourceLanguage: it.SourceLanguage, SkipTranslation: it.SkipTranslation,
		Status: it.Status, CreatedAt: it.CreatedAt, TranslatedLanguages: it.TranslatedLanguages,
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
}
