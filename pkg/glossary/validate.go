package glossary

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/language"

	"github.com/chatbridge/chat/pkg/chat"
)

// Limits of a glossary.
const (
	MaxKeep        = 500
	MaxFixed       = 500
	MaxTermChars   = 100
	MaxRenderChars = 200
	// MaxBodyBytes bounds a PUT's body: a glossary at its counts' limits
	// with 100-character terms fits (a fixed term with a few languages);
	// the stored glossary stays far under DynamoDB's 400 KB item.
	MaxBodyBytes = 256 << 10
)

// Empty reports whether g has no term.
func (g Glossary) Empty() bool { return len(g.Keep) == 0 && len(g.Fixed) == 0 }

// Validate checks g as a PUT body or a fixture's glossary: its counts, each
// term (1 to 100 characters, no control or line separator characters, no
// space at either end, not twice), each fixed term's translations (at
// least one, keyed by a language tag, 1 to 200 characters each). Fields of
// the errors: keep, fixed, keep[i], fixed[i].term, fixed[i].translations.
func Validate(g Glossary) error {
	var v chat.Validation
	if len(g.Keep) > MaxKeep {
		v.Add("keep", fmt.Sprintf("The keep list may have at most %d terms.", MaxKeep))
	}
	if len(g.Fixed) > MaxFixed {
		v.Add("fixed", fmt.Sprintf("The fixed list may have at most %d terms.", MaxFixed))
	}
	seen := map[string]string{}
	for i, t := range g.Keep {
		field := fmt.Sprintf("keep[%d]", i)
		if msg := termProblem(t); msg != "" {
			v.Add(field, msg)
		} else if where, dup := seen[t]; dup {
			v.Add(field, fmt.Sprintf("The term %q is already in %s.", t, where))
		} else {
			seen[t] = field
		}
	}
	for i, f := range g.Fixed {
		field := fmt.Sprintf("fixed[%d].term", i)
		if msg := termProblem(f.Term); msg != "" {
			v.Add(field, msg)
		} else if where, dup := seen[f.Term]; dup {
			v.Add(field, fmt.Sprintf("The term %q is already in %s.", f.Term, where))
		} else {
			seen[f.Term] = field
		}
		tf := fmt.Sprintf("fixed[%d].translations", i)
		if len(f.Translations) == 0 {
			v.Add(tf, "A fixed term needs at least one translation.")
		}
		for _, lang := range sortedKeys(f.Translations) {
			if _, err := language.Parse(lang); err != nil || strings.TrimSpace(lang) != lang || lang == "" {
				v.Add(tf, fmt.Sprintf("%q is not a language tag.", lang))
				continue
			}
			if msg := textProblem(f.Translations[lang], MaxRenderChars); msg != "" {
				v.Add(tf, lang+": "+msg)
			}
		}
	}
	return v.Err()
}

func termProblem(t string) string { return textProblem(t, MaxTermChars) }

func textProblem(t string, max int) string {
	n := utf8.RuneCountInString(t)
	switch {
	case n == 0:
		return "A term must not be empty."
	case n > max:
		return fmt.Sprintf("A term may be at most %d characters.", max)
	case strings.TrimSpace(t) != t:
		return "A term must not start or end with white space."
	}
	for _, r := range t {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == utf8.RuneError {
			return "A term must not contain control characters or line breaks."
		}
	}
	return ""
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// WithVersion returns g with Version set from its content ("" when empty):
// the same terms give the same version.
func WithVersion(g Glossary) Glossary {
	if g.Keep == nil {
		g.Keep = []string{}
	}
	if g.Fixed == nil {
		g.Fixed = []Fixed{}
	}
	g.Version = ""
	if g.Empty() {
		return g
	}
	b, _ := json.Marshal(struct {
		Keep  []string `json:"keep"`
		Fixed []Fixed  `json:"fixed"`
	}{g.Keep, g.Fixed}) // map keys marshal sorted: canonical
	sum := sha256.Sum256(b)
	g.Version = hex.EncodeToString(sum[:8])
	return g
}
