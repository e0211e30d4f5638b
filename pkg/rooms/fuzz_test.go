package rooms_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/rooms"
)

// FuzzNormalizeNickname checks the nickname rule of docs/decisions.md on
// any input: it never panics; an accepted nickname is the input trimmed,
// 1 to 64 code points of valid UTF-8 with no control character, line or
// paragraph separator, or format character other than ZWJ, and is accepted
// again unchanged; a refusal is one of the three contract sentences; and
// text made only of letters, marks, digits and spaces of any script
// (lookalikes included) is never refused for its characters. Seeds live in
// testdata/fuzz/FuzzNormalizeNickname.
func FuzzNormalizeNickname(f *testing.F) {
	problems := map[string]bool{
		"The nickname field is required.":                            true,
		"The nickname field contains invalid characters.":            true,
		"The nickname field must not be greater than 64 characters.": true,
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, problem := rooms.NormalizeNickname(s)
		trimmed := strings.TrimSpace(s)
		plain := utf8.ValidString(trimmed) && strings.IndexFunc(trimmed, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsMark(r) && !unicode.IsDigit(r) && r != ' '
		}) < 0
		if problem != "" {
			if !problems[problem] || n != "" {
				t.Fatalf("NormalizeNickname(%q) = %q, %q", s, n, problem)
			}
			if plain && problem == "The nickname field contains invalid characters." {
				t.Fatalf("NormalizeNickname(%q) refused plain text for its characters", s)
			}
			return
		}
		if n != trimmed || n == "" || !utf8.ValidString(n) || utf8.RuneCountInString(n) > rooms.MaxNicknameLen {
			t.Fatalf("NormalizeNickname(%q) accepted %q", s, n)
		}
		for _, r := range n {
			if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r) && r != '\u200d' {
				t.Fatalf("NormalizeNickname(%q) accepted %q with %U", s, n, r)
			}
		}
		if again, p := rooms.NormalizeNickname(n); again != n || p != "" {
			t.Fatalf("NormalizeNickname(%q) = %q, %q, want it unchanged", n, again, p)
		}
	})
}
