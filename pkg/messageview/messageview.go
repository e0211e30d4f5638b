// Package messageview is a message as the API shows it to one reader
// (contract section 6): the guest and member lists, a post's answer and a
// realtime push all encode it here.
package messageview

import (
	"encoding/json"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/rooms"
)

// messageAuthorView is a message's author. id and avatar_url are null when
// the author has none (a guest has no avatar), never "".
type messageAuthorView struct {
	Type      string  `json:"type"`
	ID        *string `json:"id"`
	Name      string  `json:"name"`
	AvatarURL *string `json:"avatar_url"`
}

// View is a message in one reader's language (contract section 6).
type View struct {
	ID               string            `json:"id"`
	ChannelID        string            `json:"channel_id"`
	Author           messageAuthorView `json:"author"`
	Content          string            `json:"content"`
	Language         string            `json:"language"`
	OriginalContent  string            `json:"original_content"`
	OriginalLanguage string            `json:"original_language"`
	Translated       bool              `json:"translated"`
	CreatedAt        string            `json:"created_at"`
}

// Of is v as the API shows it.
func Of(v rooms.MessageView) View {
	m := v.Message
	return View{
		ID:        m.ID,
		ChannelID: m.ChannelID,
		Author: messageAuthorView{
			Type: m.Author.Type, ID: httpapi.Nullable(m.Author.ID), Name: m.Author.Name, AvatarURL: httpapi.Nullable(m.Author.AvatarURL),
		},
		Content:          v.Content,
		Language:         v.Language,
		OriginalContent:  m.Content,
		OriginalLanguage: m.SourceLanguage,
		Translated:       v.Translated,
		CreatedAt:        chat.FormatTime(m.CreatedAt),
	}
}

// Encode returns the JSON of v, in at most MaxItemBytes. A
// translation is stored as the translator returned it, so one could make
// the view too long to fit a page alone; such a view shows the original
// instead (translated false), which always fits: content and
// original_content are each at most 40,000 characters of at most 6 bytes
// of JSON (\u003c, \u2028), and every other field is bounded (see
// docs/decisions.md, "Lists and page size").
func Encode(v rooms.MessageView) ([]byte, error) {
	b, err := json.Marshal(Of(v))
	if err != nil || len(b) <= httpapi.MaxItemBytes || !v.Translated {
		return b, err
	}
	return json.Marshal(Of(rooms.ViewOf(v.Message, nil, "")))
}
