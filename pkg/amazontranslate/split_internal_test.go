package amazontranslate

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSplit: pieces concatenate back to the text, each at most max bytes,
// never cut inside a character, a tag, an entity or a translate="no"
// element; a piece of protected elements alone is not sent.
func TestSplit(t *testing.T) {
	big := `<span translate="no" id="p2">` + strings.Repeat("`", 60) + `</span>`
	for _, tc := range []struct {
		name  string
		text  string
		max   int
		want  int // pieces
		sends int
	}{
		{"short", "hello", 10, 1, 1},
		{"exactly max", "abcdefghij", 10, 1, 1},
		{"digits only: nothing to send", "0123456789", 10, 1, 0},
		{"at a word", "aaaa bbbb cccc", 10, 2, 2},
		{"no break", strings.Repeat("x", 25), 10, 3, 3},
		{"multi-byte runes", strings.Repeat("ü", 12), 5, 6, 6},
		{"an entity is whole", "aaaaaa&amp;bbb", 8, 2, 2},
		{"a tag is whole", `aaaa <b id="p1"/> bbbb`, 12, 3, 2},
		{"an element too big is its own piece, not sent", "run " + big + " now please", 40, 3, 2},
		{"elements alone", `<span translate="no" id="p1">x</span> <span translate="no" id="p2">y</span>`, 1000, 1, 0},
	} {
		chunks := split(tc.text, tc.max)
		var b strings.Builder
		sends := 0
		for _, c := range chunks {
			if c.send && (len(c.text) > tc.max || !utf8.ValidString(c.text)) {
				t.Errorf("%s: piece %q over %d bytes or cut inside a character", tc.name, c.text, tc.max)
			}
			if c.send {
				sends++
			}
			if strings.Count(c.text, "<") != strings.Count(c.text, ">") || strings.Count(c.text, "&") != strings.Count(c.text, ";") {
				t.Errorf("%s: piece %q cuts a tag or an entity", tc.name, c.text)
			}
			b.WriteString(c.text)
		}
		if len(chunks) != tc.want || sends != tc.sends {
			t.Errorf("%s: %d pieces (%d sent) %+v, want %d (%d)", tc.name, len(chunks), sends, chunks, tc.want, tc.sends)
		}
		if b.String() != tc.text {
			t.Errorf("%s: pieces give %q, want %q", tc.name, b.String(), tc.text)
		}
	}
}
