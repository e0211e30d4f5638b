package messages_test

import (
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/messages"
)

const required = "The content field is required."

func TestCheckContent(t *testing.T) {
	tooLong := "The content field must not be greater than 40000 characters."
	for _, tc := range []struct {
		name, content, want string
	}{
		{"plain", "hola", ""},
		{"untrimmed is fine", "  indented\n", ""},
		{"max in multibyte characters", strings.Repeat("é", messages.MaxContentLen), ""},
		{"max in '<'", strings.Repeat("<", messages.MaxContentLen), ""},
		{"max in emoji", strings.Repeat("😀", messages.MaxContentLen), ""},
		{"max in U+FFFF", strings.Repeat("\uffff", messages.MaxContentLen), ""},
		{"max with U+2028 around a letter", "\u2028" + strings.Repeat("a", messages.MaxContentLen-2) + "\u2028", ""},
		{"empty", "", required},
		{"blank", " \t\n\u00a0", required},
		{"too long", strings.Repeat("a", messages.MaxContentLen+1), tooLong},
		{"too long in emoji", strings.Repeat("😀", messages.MaxContentLen+1), tooLong},
		{"too long in U+2028 and one letter", "a" + strings.Repeat("\u2028", messages.MaxContentLen), tooLong},
		{"too long in invisibles is blank first", strings.Repeat("\u200b", messages.MaxContentLen+1), required},
		{"one visible among invisibles", "\u200b\u200d\ufeffx\u2060", ""},
		{"emoji ZWJ sequence", "👩\u200d💻", ""},
		{"combining mark alone is drawn", "\u0301", ""},
		{"private use is drawn", "\ue000", ""},
		{"U+FFFF is not invisible", "\uffff", ""},
		{"invalid UTF-8 is not blank", "\xff", "The content field must be a valid UTF-8 string."},
	} {
		if got := messages.CheckContent(tc.content); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Content with nothing visible is blank, whatever invisible characters
// make it up.
func TestCheckContentInvisibleOnly(t *testing.T) {
	for _, r := range []rune{
		'\u200b', '\u200c', '\u200d', '\u200e', '\u200f', // zero width space, joiners, marks (Cf)
		'\ufeff', '\u2060', '\u2061', '\u2062', '\u2063', '\u2064', // BOM, word joiner, invisible operators (Cf)
		'\u180e',                     // Mongolian vowel separator (Cf)
		'\u180b', '\u180f', '\ufe0f', // variation selectors (Mn)
		'\U000e0100',               // variation selector 17
		'\U000e0001', '\U000e0041', // tags (Cf)
		'\u00ad', '\u061c', '\u034f', // soft hyphen, Arabic letter mark, grapheme joiner
		'\u202a', '\u202e', '\u2066', '\u2069', // bidi embeddings and isolates (Cf)
		'\u3164', '\u115f', '\u1160', '\uffa0', // Hangul fillers (Lo, default ignorable)
		'\u2800',                               // Braille pattern blank (So)
		'\u3000', '\u2002', '\u205f', '\u1680', // spaces (Zs)
		'\u2028', '\u2029', // line and paragraph separators (Zl, Zp)
		'\u0000', '\u0007', '\u007f', '\u0085', // controls (Cc)
		'\U0001d173', '\U0001bca0', // musical and shorthand format controls (Cf)
	} {
		if !messages.Invisible(r) {
			t.Errorf("Invisible(%U) = false, want true", r)
		}
		for _, s := range []string{string(r), " " + string(r) + "\n", strings.Repeat(string(r), 3)} {
			if got := messages.CheckContent(s); got != required {
				t.Errorf("CheckContent(%+q) = %q, want %q", s, got, required)
			}
		}
	}
	if got := messages.CheckContent("\u200b\u200d\ufeff\u2060\u180e\u3164\u115f\u2800 \u00a0"); got != required {
		t.Errorf("a mix of invisible characters: got %q, want %q", got, required)
	}
	for _, r := range []rune{'a', '0', '.', 'é', '😀', '\u0301', '\ue000', '\ufffd', '\uffff', '\u3042', '\u2801'} {
		if messages.Invisible(r) {
			t.Errorf("Invisible(%U) = true, want false", r)
		}
	}
}
