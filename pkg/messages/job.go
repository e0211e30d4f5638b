package messages

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
)

// Job is one accepted message on its way to translation: everything the
// translation function needs without reading the message back.
type Job struct {
	MessageID   string `json:"message_id"`
	WorkspaceID string `json:"workspace_id"`
	ChannelID   string `json:"channel_id"`
	Content     string `json:"content"`
	// SourceLanguage is the fallback source for translators that cannot
	// detect: the author's preferred language for a guest or user, the
	// workspace's default_language for a webhook.
	SourceLanguage  string    `json:"source_language"`
	SkipTranslation bool      `json:"skip_translation"`
	AuthorType      string    `json:"author_type"`
	CreatedAt       time.Time `json:"created_at"`
}

// JobOf returns the job of a stored message.
func JobOf(m chat.Message) Job {
	return Job{
		MessageID: m.ID, WorkspaceID: m.WorkspaceID, ChannelID: m.ChannelID, Content: m.Content,
		SourceLanguage: m.SourceLanguage, SkipTranslation: m.SkipTranslation, AuthorType: m.Author.Type,
		CreatedAt: m.CreatedAt,
	}
}

// Encode returns the job's queue body.
func (j Job) Encode() string {
	b, err := json.Marshal(j)
	if err != nil {
		panic("messages: marshal job: " + err.Error())
	}
	return string(b)
}

// DecodeJob parses a queue body. A body that is not a complete job is a
// poison message: retrying it cannot help.
func DecodeJob(body string) (Job, error) {
	var j Job
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		return Job{}, fmt.Errorf("messages: job body: %w", err)
	}
	if !chat.ValidID(j.MessageID) || !chat.ValidID(j.ChannelID) {
		return Job{}, fmt.Errorf("messages: job body lacks valid message_id/channel_id")
	}
	return j, nil
}
