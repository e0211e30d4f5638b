package messages

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
)

// MaxContentLen is the contract's bound on a message, in characters, for
// every way a message enters a channel (a webhook, a guest).
const MaxContentLen = 40000

// CheckContent returns the contract's complaint about a message's content,
// or "" when it is acceptable: not blank, at most MaxContentLen characters.
// Blank means nothing visible: only characters that Invisible reports. The
// content is stored as sent, untrimmed: leading indentation and trailing
// newlines can matter (code, lists).
func CheckContent(s string) string {
	switch {
	case strings.IndexFunc(s, visible) < 0:
		return "The content field is required."
	case !utf8.ValidString(s):
		return "The content field must be a valid UTF-8 string."
	case utf8.RuneCountInString(s) > MaxContentLen:
		return "The content field must not be greater than 40000 characters."
	}
	return ""
}

func visible(r rune) bool { return !Invisible(r) }

// blankGlyphs are characters of no invisible category or property that
// every font draws as nothing, and that are used to fake an empty message.
var blankGlyphs = &unicode.RangeTable{R16: []unicode.Range16{
	{Lo: 0x2800, Hi: 0x2800, Stride: 1}, // BRAILLE PATTERN BLANK
}}

// Invisible reports whether r renders as nothing on its own: white space
// and separators (Zs, Zl, Zp), controls (Cc), format characters (Cf: zero
// width space and joiners, bidi marks, U+FEFF, U+2060, U+180E, tags),
// variation selectors, the other default-ignorable code points (U+034F,
// the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, ...), and the blank
// Braille pattern U+2800.
func Invisible(r rune) bool {
	return unicode.IsSpace(r) || unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp, unicode.Cc, unicode.Cf,
		unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point, blankGlyphs)
}

// ContentField reads obj's required "content" field and checks it as
// CheckContent does, adding any problem to v.
func ContentField(obj jsonbody.Object, v *chat.Validation) string {
	content, ok := obj.String(v, "content", "content")
	switch {
	case !ok && !v.Has("content"):
		v.Add("content", "The content field is required.")
	case ok:
		if problem := CheckContent(content); problem != "" {
			v.Add("content", problem)
		}
	}
	return content
}

// CheckPostContent is CheckContent for a post or an edit that carries
// attachments attachments: with at least one, the content may be blank
// (a screenshot needs no words); its other bounds hold.
func CheckPostContent(s string, attachments int) string {
	if attachments > 0 && strings.IndexFunc(s, visible) < 0 && utf8.ValidString(s) {
		return ""
	}
	return CheckContent(s)
}

// BodyFields reads a post's "content" and "attachments" fields
// (attachments.Field), adding any problem to v: content is required
// unless the post carries attachments, and is then "" when absent.
func BodyFields(obj jsonbody.Object, v *chat.Validation) (string, []attachments.Ref) {
	refs, _ := attachments.Field(obj, v)
	content, ok := obj.String(v, "content", "content")
	switch {
	case !ok && !v.Has("content"):
		if len(refs) == 0 {
			v.Add("content", "The content field is required.")
		}
	case ok:
		if problem := CheckPostContent(content, len(refs)); problem != "" {
			v.Add("content", problem)
		}
	}
	return content, refs
}
