package chatcorpus_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chatbridge/chat/internal/chatcorpus"
)

// TestCorpusIsWellFormed: unique ids, known classes, authors and
// languages, every kept substring in its content, at least 100 messages
// and 6 a class.
func TestCorpusIsWellFormed(t *testing.T) {
	classes := map[string]int{}
	for _, c := range chatcorpus.Classes() {
		classes[c] = 0
	}
	ids := map[string]bool{}
	ms := chatcorpus.Messages()
	for _, m := range ms {
		if ids[m.ID] || m.ID == "" {
			t.Errorf("id %q repeated or empty", m.ID)
		}
		ids[m.ID] = true
		if _, ok := classes[m.Class]; !ok {
			t.Errorf("%s: class %q unknown", m.ID, m.Class)
		}
		classes[m.Class]++
		if m.Author != "ben" && m.Author != "ana" && m.Author != "bot" {
			t.Errorf("%s: author %q", m.ID, m.Author)
		}
		switch m.Language {
		case "en", "es", "mixed", "none":
		default:
			t.Errorf("%s: language %q", m.ID, m.Language)
		}
		if n := utf8.RuneCountInString(m.Content); n == 0 || n > 4000 {
			t.Errorf("%s: %d characters", m.ID, n)
		}
		for _, k := range m.Keep {
			if !strings.Contains(m.Content, k) {
				t.Errorf("%s: keep %q not in the content", m.ID, k)
			}
		}
		for lang, ks := range m.KeepIn {
			for _, k := range ks {
				if !strings.Contains(m.Content, k) || lang != "es" && lang != "en" {
					t.Errorf("%s: keep_in %s %q", m.ID, lang, k)
				}
			}
		}
	}
	if len(ms) < 100 {
		t.Errorf("%d messages, want at least 100", len(ms))
	}
	for c, n := range classes {
		if n < 6 {
			t.Errorf("class %s has %d messages, want at least 6", c, n)
		}
	}
}
