package rooms

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/chat"
	"golang.org/x/text/language"
)

// MaxContentLen is the contract's bound on a message, in characters.
const MaxContentLen = 40000

// MessageWriter stores a new message. Storing it is all a post does: the
// table's stream queues it for translation.
type MessageWriter interface {
	// PutMessage stores m. Errors: EConflict when a message with its id
	// exists; EUnavailable when storage failed.
	PutMessage(ctx context.Context, m chat.Message) error
}

// MessageReader reads a channel's messages and their translations.
type MessageReader interface {
	// ListMessages returns up to limit messages of the channel, newest
	// first, after the position after ("" for the first page). Errors:
	// EValidation on "cursor" for a position that is not a message's;
	// EUnavailable when storage failed.
	ListMessages(ctx context.Context, channelID, after string, limit int) (chat.Page[chat.Message], error)
	// Translations returns the stored translations of the messages into
	// any of the languages, as message id -> language -> content. Pairs
	// without a translation are absent. Errors: EUnavailable when storage
	// failed.
	Translations(ctx context.Context, messageIDs, languages []string) (map[string]map[string]string, error)
}

// MessageView is a message as one reader sees it.
type MessageView struct {
	Message chat.Message
	// Content is the translation into the reader's language when there is
	// one, else the original content.
	Content string
	// Language is the translation's language, else the message's
	// SourceLanguage.
	Language   string
	Translated bool
}

// CheckContent returns the contract's complaint about a message's content,
// or "" when it is acceptable: not blank after trimming, at most
// MaxContentLen characters. The content is stored as sent, untrimmed:
// leading indentation and trailing newlines can matter (code, lists).
func CheckContent(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "The content field is required."
	case !utf8.ValidString(s):
		return "The content field must be a valid UTF-8 string."
	case utf8.RuneCountInString(s) > MaxContentLen:
		return "The content field must not be greater than 40000 characters."
	}
	return ""
}

// Poster posts a guest's messages into its room's channel.
type Poster struct {
	Store MessageWriter
	IDs   *chat.IDs
	Now   chat.Clock
}

// Post stores content as a message by the session's guest in room, queued
// for translation, and returns it as its author reads it: the original.
// The guest's preferred language is the source language a translator that
// cannot detect falls back to. Errors: EValidation on "content" (see
// CheckContent); EUnavailable when storage failed.
func (p *Poster) Post(ctx context.Context, s chat.GuestSession, room chat.Room, content string) (MessageView, error) {
	if problem := CheckContent(content); problem != "" {
		return MessageView{}, chat.FieldError("content", problem)
	}
	now := p.Now().UTC()
	g := s.Guest
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
	}
	if err := p.Store.PutMessage(ctx, m); err != nil {
		return MessageView{}, err
	}
	return ViewOf(m, nil, nil), nil
}

// Lister lists a room's messages in a guest's language.
type Lister struct {
	Store MessageReader
}

// List returns up to limit messages of room's channel, newest first, after
// the position after, each in the language of the reading guest s when a
// translation into it exists. It costs one query and one batch read of
// translations per 100 (message, language) pairs. Errors: those of
// MessageReader.
func (l *Lister) List(ctx context.Context, s chat.GuestSession, room chat.Room, after string, limit int) (chat.Page[MessageView], error) {
	page, err := l.Store.ListMessages(ctx, room.ChannelID, after, limit)
	if err != nil {
		return chat.Page[MessageView]{}, err
	}
	langs := ReaderLanguages(s.Guest.PreferredLanguage)
	var ids []string
	for _, m := range page.Items {
		if !m.SkipTranslation {
			ids = append(ids, m.ID)
		}
	}
	var trs map[string]map[string]string
	if len(ids) > 0 && len(langs) > 0 {
		if trs, err = l.Store.Translations(ctx, ids, langs); err != nil {
			return chat.Page[MessageView]{}, err
		}
	}
	out := chat.Page[MessageView]{Next: page.Next, Items: make([]MessageView, 0, len(page.Items))}
	for _, m := range page.Items {
		out.Items = append(out.Items, ViewOf(m, trs[m.ID], langs))
	}
	return out, nil
}

// ViewOf returns m as seen by a reader whose candidate languages are langs
// (see ReaderLanguages), given m's translations by language: the first
// candidate with a translation wins; with none, the original. A message
// posted with skip_translation is always the original.
func ViewOf(m chat.Message, translations map[string]string, langs []string) MessageView {
	if !m.SkipTranslation {
		for _, l := range langs {
			if text, ok := translations[l]; ok {
				return MessageView{Message: m, Content: text, Language: l, Translated: true}
			}
		}
	}
	return MessageView{Message: m, Content: m.Content, Language: m.SourceLanguage}
}

// ReaderLanguages returns the translation languages that can serve a reader
// whose preferred language is tag, best first. Translations are stored
// under the translator's target code ("es", "es-MX", "zh-TW", "pt-PT"), so
// a reader's tag is widened step by step:
//
//  1. the tag as sent ("es-MX");
//  2. its canonical form ("EN-us" -> "en-US", "iw" -> "he");
//  3. language-region, dropping a script that the region implies anyway
//     and any variant or extension ("zh-Hant-TW" -> "zh-TW",
//     "de-CH-1996" -> "de-CH");
//  4. language-script, when the script is explicit or not the language's
//     usual one ("zh-TW" -> "zh-Hant", "sr-Latn-RS" -> "sr-Latn");
//  5. for such a script, the region code that stands for it ("zh-HK" ->
//     "zh-TW"), so that a Traditional Chinese reader is not served
//     Simplified "zh" first;
//  6. the base language ("es");
//  7. the macro-language it belongs to, when that is the code a
//     translator uses ("nb" -> "no").
//
// The translation function chooses each reader's target with
// translation.Languages, a CLDR matcher over the translator's own codes;
// every target it picks by language, script or region is among these
// candidates. A target it reaches across regions ("es-AR" -> "es-MX"),
// across languages ("da" -> "no") or back to a deprecated code ("fil" ->
// "tl") is not, and such a reader sees the original unless a candidate
// translation exists.
//
// Every candidate is a well-formed tag; a tag that does not parse yields
// only itself (if well-formed).
func ReaderLanguages(tag string) []string {
	var out []string
	add := func(s string) {
		if !chat.ValidLanguageTag(s) {
			return
		}
		for _, o := range out {
			if o == s {
				return
			}
		}
		out = append(out, s)
	}
	add(tag)
	t, err := language.Parse(tag)
	if err != nil {
		// A tag with unregistered subtags is well-formed but cannot be
		// widened reliably.
		return out
	}
	add(t.String())
	base, rawScript, rawRegion := t.Raw()
	if base.String() == "und" {
		return out
	}
	script, _ := t.Script()
	// scriptOf is the script base implies, alone or with a region.
	scriptOf := func(parts ...any) language.Script {
		c, err := language.Compose(append([]any{base}, parts...)...)
		if err != nil {
			return language.Script{}
		}
		s, _ := c.Script()
		return s
	}
	if rawRegion != (language.Region{}) && scriptOf(rawRegion) == script {
		add(base.String() + "-" + rawRegion.String())
	}
	if unusual := script != scriptOf(); unusual || rawScript != (language.Script{}) {
		add(base.String() + "-" + script.String())
		if c, err := language.Compose(base, script); err == nil && unusual {
			if r, _ := c.Region(); scriptOf(r) == script {
				add(base.String() + "-" + r.String())
			}
		}
	}
	add(base.String())
	// Macro-language and legacy codes a translator may name instead
	// ("nb" -> "no", "cmn" -> "zh", "arb" -> "ar").
	if all, err := language.All.Parse(tag); err == nil {
		b, _ := all.Base()
		add(b.String())
	}
	return out
}
