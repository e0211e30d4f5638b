package amazontranslate

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		max  int
		want int // pieces
	}{
		{"short", "hello", 10, 1},
		{"exactly max", "0123456789", 10, 1},
		{"at a line", "aaaa bbbb\ncccc", 10, 2},
		{"at a word", "aaaa bbbb cccc", 10, 2},
		{"no break", strings.Repeat("x", 25), 10, 3},
		{"multi-byte runes", strings.Repeat("ü", 12), 5, 6},
	} {
		pieces, seps := split(tc.text, tc.max)
		if len(pieces) != tc.want || len(seps) != len(pieces)-1 {
			t.Errorf("%s: %d pieces %q seps %q, want %d", tc.name, len(pieces), pieces, seps, tc.want)
			continue
		}
		var b strings.Builder
		for i, p := range pieces {
			if len(p) > tc.max || !utf8.ValidString(p) {
				t.Errorf("%s: piece %q over %d bytes or cut inside a character", tc.name, p, tc.max)
			}
			b.WriteString(p)
			if i < len(seps) {
				b.WriteString(seps[i])
			}
		}
		if b.String() != tc.text {
			t.Errorf("%s: pieces and separators give %q, want %q", tc.name, b.String(), tc.text)
		}
	}
}
