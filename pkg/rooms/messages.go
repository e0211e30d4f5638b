package rooms

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
)

// MessageWriter stores a new message. Storing it is all a post does: the
// table's stream queues it for translation.
type MessageWriter interface {
	// PutMessage stores m; a reply (m.ThreadID, a root's id) also counts
	// itself on its root in the same write. Errors: EConflict when a
	// message with its id exists; EValidation on "thread_id" when the root
	// is gone, deleted or a reply; EUnavailable when storage failed.
	PutMessage(ctx context.Context, m chat.Message) error
	messages.ThreadReader
}

// PostsPerMinute is the contract's bound on a guest's posts, counted in
// fixed PostWindow windows.
const (
	PostsPerMinute = 30
	PostWindow     = time.Minute
)

// PostCounter counts a guest's posts per window, atomically.
type PostCounter interface {
	// CountPost counts one post of guestID in the window starting at
	// window, unless the window already holds limit posts: then it reports
	// false and counts nothing. Errors: EUnavailable when storage failed.
	CountPost(ctx context.Context, guestID string, window time.Time, limit int) (bool, error)
}

// ErrTooManyPosts answers a post past PostsPerMinute; it carries the
// seconds until the window ends (at least 1) as Retry-After.
func ErrTooManyPosts(now, window time.Time) error {
	e := chat.Errorf(chat.EQuotaExceeded, "Too many messages. A guest posts at most %d messages a minute.", PostsPerMinute)
	e.RetryAfter = max(1, int(math.Ceil(window.Add(PostWindow).Sub(now).Seconds())))
	return e
}

// MessageReader reads a channel's messages and their translations.
type MessageReader interface {
	// ListMessages returns up to limit messages of the channel, newest
	// first, after the position after ("" for the first page). Errors:
	// EValidation on "cursor" for a position that is not a message's;
	// EUnavailable when storage failed.
	ListMessages(ctx context.Context, channelID, after string, limit int) (chat.Page[chat.Message], error)
	// Translations returns the stored translation of each message
	// messageIDs[i] into languages[i] (the two are parallel: one key per
	// message), as message id -> language -> translation (its content and
	// alt texts). Pairs without a translation are absent. Errors:
	// EUnavailable when storage failed.
	Translations(ctx context.Context, messageIDs, languages []string) (map[string]map[string]chat.Translation, error)
}

// Poster posts a guest's messages into its room's channel.
type Poster struct {
	Store MessageWriter
	// Rate counts the guest's posts; nil means no limit, which only tests
	// that are not about the limit use.
	Rate PostCounter
	// Attachments checks and attaches a post's files; nil refuses a post
	// with attachments (503).
	Attachments *attachments.Service
	IDs         *chat.IDs
	Now         chat.Clock
}

// Post stores content as a message by the session's guest in room, queued
// for translation, and returns it as its author reads it: the original.
// The guest's preferred language is the source language a translator that
// cannot detect falls back to. The guest's post is counted (Rate) once the
// content is valid, so a refused post does not count. Errors: EValidation
// on "content" (see messages.CheckContent); EQuotaExceeded
// (ErrTooManyPosts) past PostsPerMinute in the current window;
// EUnavailable when storage failed.
func (p *Poster) Post(ctx context.Context, s chat.GuestSession, room chat.Room, content string, refs []attachments.Ref) (chat.MessageView, error) {
	return p.PostIn(ctx, s, room, "", content, refs)
}

// PostIn is Post into the thread of message threadID ("" for a root): a
// reply to a reply joins its root's thread (messages.Thread, one read).
// Errors: those of Post; EValidation on "thread_id" (see
// messages.ThreadReader), checked before the post is counted.
func (p *Poster) PostIn(ctx context.Context, s chat.GuestSession, room chat.Room, threadID, content string, refs []attachments.Ref) (chat.MessageView, error) {
	if problem := messages.CheckPostContent(content, len(refs)); problem != "" {
		return chat.MessageView{}, chat.FieldError("content", problem)
	}
	root, err := messages.Thread(ctx, p.Store, room.ChannelID, threadID)
	if err != nil {
		return chat.MessageView{}, err
	}
	now := p.Now().UTC()
	g := s.Guest
	if p.Rate != nil {
		window := now.Truncate(PostWindow)
		ok, err := p.Rate.CountPost(ctx, g.ID, window, PostsPerMinute)
		if err != nil {
			return chat.MessageView{}, err
		}
		if !ok {
			return chat.MessageView{}, ErrTooManyPosts(now, window)
		}
	}
	m := chat.Message{
		ID:          p.IDs.New(now),
		WorkspaceID: room.WorkspaceID,
		ChannelID:   room.ChannelID,
		Author: chat.Author{
			Type: chat.AuthorGuest, ID: g.ID, Name: g.Nickname, Language: g.PreferredLanguage,
		},
		Content:        content,
		SourceLanguage: g.PreferredLanguage,
		Status:         chat.MessageQueued,
		CreatedAt:      now,
		ThreadID:       root,
	}
	err = p.Attachments.Attach(ctx, m.WorkspaceID, m.ChannelID, refs, now, func(as []chat.Attachment) error {
		m.Attachments = as
		return p.Store.PutMessage(ctx, m)
	})
	if err != nil {
		return chat.MessageView{}, err
	}
	return ViewOf(m, nil, ""), nil
}

// Lister lists a room's messages in a guest's language.
type Lister struct {
	Store MessageReader
	// Reactions reads the page's reactions (one batch read when some
	// message has any); nil shows none.
	Reactions ReactionReader
}

// List returns up to limit messages of room's channel, newest first, after
// the position after, each in the language of the reading guest s when a
// translation serves it (see ViewOf). It costs one query, then, when some
// message has a translation for the guest, one batch read of one
// translation per message, per 100 messages. Errors: those of
// MessageReader.
func (l *Lister) List(ctx context.Context, s chat.GuestSession, room chat.Room, after string, limit int) (chat.Page[chat.MessageView], error) {
	page, err := ReadChannel(ctx, l.Store, room.ChannelID, s.Guest.PreferredLanguage, after, limit)
	if err != nil {
		return page, err
	}
	return page, WithReactions(ctx, l.Reactions, ReaderOwner(chat.AuthorGuest, s.Guest.ID), page.Items)
}

// ViewOf returns m as seen by a reader whose preferred language is tag,
// given m's stored translations by language. The reader sees the
// translation into the language chat.PickLanguage chooses for tag among
// m.TranslatedLanguages, the codes the translation function stored it
// under: the very target it translates into for such a reader, else the
// closest one stored. The reader sees the original when m's source
// language serves them better than any of those, when none serves them, or
// when the chosen translation is not in translations. A message posted with
// skip_translation is always the original, and so is a translation that
// is the original (translated is true only when the content shown
// differs). The translation's alt texts are the view's when there is one
// per attachment and one of them differs from the original, also when
// the content is not translated (a message that is only attachments).
func ViewOf(m chat.Message, translations map[string]chat.Translation, tag string) chat.MessageView {
	v := chat.OriginalView(m)
	lang, ok := pick(m, tag)
	if !ok {
		return v
	}
	tr, ok := translations[lang]
	if !ok {
		return v
	}
	if tr.Content != m.Content {
		v.Content, v.Language, v.Translated = tr.Content, lang, true
	}
	if len(tr.AltTexts) == len(m.Attachments) {
		for i, a := range m.Attachments {
			if tr.AltTexts[i] != "" && tr.AltTexts[i] != a.AltText {
				v.AltTexts = tr.AltTexts
				break
			}
		}
	}
	return v
}

// pick returns the language of m's stored translation that serves a reader
// of tag, as ViewOf shows it. The source language competes with the stored
// ones: the translation function never translates into it, so a reader it
// serves reads the original, not a neighbouring variant made for others (an
// es-ES reader of a Spanish message is not shown the es-MX translation, nor
// a zh-CN reader of a Simplified Chinese one the zh-TW translation).
func pick(m chat.Message, tag string) (string, bool) {
	if m.SkipTranslation || len(m.TranslatedLanguages) == 0 {
		return "", false
	}
	lang, ok := chat.PickLanguage(tag, append(slices.Clip(m.TranslatedLanguages), m.SourceLanguage)...)
	if !ok || !slices.Contains(m.TranslatedLanguages, lang) {
		return "", false
	}
	return lang, true
}

// TranslationLanguage returns the language of m's stored translation that
// a reader of tag sees (as ViewOf chooses it), and false when that reader
// sees the original. The realtime push uses it to read one translation per
// language, not per reader, and to tell when a reader's translation landed.
func TranslationLanguage(m chat.Message, tag string) (string, bool) { return pick(m, tag) }
