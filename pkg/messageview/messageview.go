// Package messageview is a message as the API shows it to one reader
// (contract section 6): the guest and member lists, a post's answer and a
// realtime push all encode it here.
package messageview

import (
	"encoding/json"
	"time"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
)

// MaxBytes is the longest view Encode returns: httpapi.MaxItemBytes, the
// longest item a list page holds alone (1 MiB less the list's frame with
// the longest cursor). It is written out here, and a test holds the two
// equal, so that the realtime functions, which push views, do not link
// the HTTP layer.
const MaxBytes = 1<<20 - 2097

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
	// Revision, EditedAt and Deleted: contract section 13.
	Revision int     `json:"revision"`
	EditedAt *string `json:"edited_at"`
	Deleted  bool    `json:"deleted"`
	// Attachments: contract section 17; [] for none.
	Attachments []AttachmentView `json:"attachments"`
	threadFields
	// Reactions: contract section 18; [] for none. Me is the reader's own
	// (always false in a push shared by a channel's readers: clients keep
	// their own from their actions).
	Reactions []ReactionView `json:"reactions"`
}

// threadFields are a message's thread (contract section 18), on a view and
// a tombstone alike: thread_id is the root's id on a reply, null on a
// root; reply_count and last_reply_at are a root's replies (0 and null
// when none, and on a reply).
type threadFields struct {
	ThreadID    *string `json:"thread_id"`
	ReplyCount  int     `json:"reply_count"`
	LastReplyAt *string `json:"last_reply_at"`
}

// threadOf is m's thread as the API shows it.
func threadOf(m chat.Message) threadFields {
	return threadFields{ThreadID: nullable(m.ThreadID), ReplyCount: m.ReplyCount, LastReplyAt: nullableTime(m.LastReplyAt)}
}

// ReactionView is one emoji's reactions on a message.
type ReactionView struct {
	Emoji string `json:"emoji"`
	Count int    `json:"count"`
	Me    bool   `json:"me"`
}

// Reactions are v's reactions as the API shows them: [] for none.
func Reactions(v chat.MessageView) []ReactionView {
	out := make([]ReactionView, 0, len(v.Reactions))
	for _, r := range v.Reactions {
		if r.Count > 0 {
			out = append(out, ReactionView{Emoji: r.Emoji, Count: r.Count, Me: r.Me})
		}
	}
	return out
}

// AttachmentView is a file a message carries, as one reader sees it.
type AttachmentView struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	// AltText is in the reader's language when a translation is stored,
	// else OriginalAltText; both null when the file has none.
	AltText         *string `json:"alt_text"`
	OriginalAltText *string `json:"original_alt_text"`
	// URL is a presigned GET valid until URLExpiresAt.
	URL          *string `json:"url"`
	URLExpiresAt *string `json:"url_expires_at"`
}

// Linker presigns an attachment's download (s3bucket.Bucket).
type Linker interface {
	Link(a chat.Attachment, ttl time.Duration) (attachments.Link, error)
}

// Renderer renders views with their attachments' links, valid for TTL
// (attachments.ViewURLTTL when zero).
type Renderer struct {
	Links Linker
	TTL   time.Duration
}

// Attachments are v's attachments as its reader sees them: alt texts in
// the view's language, each with a presigned link (null when r has no
// Linker, or signing failed).
func (r Renderer) Attachments(v chat.MessageView) []AttachmentView {
	out := make([]AttachmentView, len(v.Message.Attachments))
	ttl := r.TTL
	if ttl == 0 {
		ttl = attachments.ViewURLTTL
	}
	for i, a := range v.Message.Attachments {
		alt := a.AltText
		if i < len(v.AltTexts) && a.AltText != "" && v.AltTexts[i] != "" {
			alt = v.AltTexts[i]
		}
		av := AttachmentView{ID: a.ID, Filename: a.Filename, ContentType: a.ContentType, Size: a.Size,
			AltText: nullable(alt), OriginalAltText: nullable(a.AltText)}
		if r.Links != nil {
			if l, err := r.Links.Link(a, ttl); err == nil {
				av.URL, av.URLExpiresAt = &l.URL, nullableTime(l.ExpiresAt)
			}
		}
		out[i] = av
	}
	return out
}

// Of is v as the API shows it.
func (r Renderer) Of(v chat.MessageView) View {
	m := v.Message
	return View{
		ID:        m.ID,
		ChannelID: m.ChannelID,
		Author: messageAuthorView{
			Type: m.Author.Type, ID: nullable(m.Author.ID), Name: m.Author.Name, AvatarURL: nullable(m.Author.AvatarURL),
		},
		Content:          v.Content,
		Language:         v.Language,
		OriginalContent:  m.Content,
		OriginalLanguage: m.SourceLanguage,
		Translated:       v.Translated,
		CreatedAt:        chat.FormatTime(m.CreatedAt),
		Revision:         m.Rev(),
		EditedAt:         nullableTime(m.EditedAt),
		Attachments:      r.Attachments(v),
		threadFields:     threadOf(m),
		Reactions:        Reactions(v),
	}
}

// Tombstone is a deleted message as every list shows it (contract section
// 13): no content, original or translation.
type Tombstone struct {
	ID        string            `json:"id"`
	ChannelID string            `json:"channel_id"`
	Author    messageAuthorView `json:"author"`
	Deleted   bool              `json:"deleted"`
	DeletedAt string            `json:"deleted_at"`
	CreatedAt string            `json:"created_at"`
	// A deleted root keeps its thread.
	threadFields
}

// TombstoneOf is deleted message m as the API shows it.
func TombstoneOf(m chat.Message) Tombstone {
	return Tombstone{
		ID: m.ID, ChannelID: m.ChannelID,
		Author:  messageAuthorView{Type: m.Author.Type, ID: nullable(m.Author.ID), Name: m.Author.Name, AvatarURL: nullable(m.Author.AvatarURL)},
		Deleted: true, DeletedAt: chat.FormatTime(m.DeletedAt), CreatedAt: chat.FormatTime(m.CreatedAt),
		threadFields: threadOf(m),
	}
}

// nullable is s, nil for "" (JSON null; httpapi.Nullable).
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// nullableTime is t in the API's format, nil for the zero time.
func nullableTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := chat.FormatTime(t)
	return &s
}

// Encode returns the JSON of v (a tombstone for a deleted message), in at
// most MaxBytes. A translation (content and alt texts) is stored as the
// translator returned it, so one could make the view too long to fit a
// page alone; such a view shows the original instead (translated false),
// which always fits: content and original_content are each at most 40,000
// characters of at most 6 bytes of JSON (\u003c, \u2028), and every other
// field is bounded (see docs/decisions.md, "Lists and page size").
func (r Renderer) Encode(v chat.MessageView) ([]byte, error) {
	if v.Message.Deleted() {
		return json.Marshal(TombstoneOf(v.Message))
	}
	b, err := json.Marshal(r.Of(v))
	if err != nil || len(b) <= MaxBytes || !v.ShowsTranslation() {
		return b, err
	}
	return json.Marshal(r.Of(chat.OriginalView(v.Message)))
}
