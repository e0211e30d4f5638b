package messages

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
)

// Job is one accepted message on its way to translation. On the queue it
// carries the message's ids and a few short fields, never its content: a
// job's body is a few hundred bytes whatever the message, so ten of them
// always fit one SendMessageBatch. The translation function reads the
// content with the same GetItem that tells it what is already translated.
type Job struct {
	MessageID   string `json:"message_id"`
	WorkspaceID string `json:"workspace_id"`
	ChannelID   string `json:"channel_id"`
	// Content is never on the queue (a body of an older release that has
	// it is read without it): translation.Service.Process fills it from the
	// message item before it translates.
	Content string `json:"-"`
	// SourceLanguage is the fallback source for translators that cannot
	// detect: the author's preferred language for a guest or user, the
	// workspace's default_language for a webhook.
	SourceLanguage  string    `json:"source_language"`
	SkipTranslation bool      `json:"skip_translation"`
	AuthorType      string    `json:"author_type"`
	CreatedAt       time.Time `json:"created_at"`
	// Revision is the revision of the content to translate (contract
	// section 13); absent (0) in a body of a message never edited, read
	// as 1.
	Revision int `json:"revision,omitempty"`
}

// Rev returns the job's revision: 1 for a message never edited.
func (j Job) Rev() int { return max(1, j.Revision) }

// JobOf returns the job of a stored message.
func JobOf(m chat.Message) Job {
	return Job{
		MessageID: m.ID, WorkspaceID: m.WorkspaceID, ChannelID: m.ChannelID, Content: m.Content,
		SourceLanguage: m.SourceLanguage, SkipTranslation: m.SkipTranslation, AuthorType: m.Author.Type,
		CreatedAt: m.CreatedAt, Revision: m.Revision,
	}
}

// Encode returns the job's queue body: JSON in which every character a
// queue might refuse is escaped. encoding/json already escapes control
// characters, '<', '>', '&', U+2028 and U+2029, and turns invalid UTF-8
// into U+FFFD; it leaves the noncharacters U+FFFE and U+FFFF raw, which SQS
// refuses (its allowed set is #x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD
// #x10000-#x10FFFF), so they are escaped here. Such a rune can only stand
// in a JSON string, where \uXXXX means the same character.
func (j Job) Encode() string {
	b, err := json.Marshal(j)
	if err != nil {
		panic("messages: marshal job: " + err.Error())
	}
	return EscapeForQueue(string(b))
}

// EscapeForQueue rewrites the runes of a JSON text that SQS refuses as
// \uXXXX escapes. It leaves every other rune as it is.
func EscapeForQueue(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !chat.QueueSafe(r) }) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if chat.QueueSafe(r) {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
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

// SendResult is what a queue did with a list of jobs: every job it does
// not name was sent.
type SendResult struct {
	// Retry lists the indexes of the jobs that were not sent and may be
	// sent later (throttling, an outage, a network error).
	Retry []int
	// Poison maps the indexes of the jobs that the queue refuses for good
	// (invalid content, too long, any sender fault) to why: sending them
	// again can only fail again.
	Poison map[int]error
}

// Pending is a message whose translation has not finished: it holds the
// marker that its writer set and that the translation function clears
// (docs/delivery.md, "The sweep").
type Pending struct {
	// Job is the message's job, as the relay would have sent it.
	Job Job
	// Attempts counts the times the sweep has queued it again.
	Attempts int
	// Version identifies this state of the marker: an update conditioned on
	// it changes nothing once the marker was cleared or moved meanwhile.
	Version string
}
