package protect_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/protect"
)

// hostile are inputs built to break a parser or a scanner.
func hostile() map[string]struct {
	in    string
	names protect.Names
} {
	type h = struct {
		in    string
		names protect.Names
	}
	var mentions, overlapping strings.Builder
	var names []string
	for i := range 1000 {
		fmt.Fprintf(&mentions, "@user%d and ", i)
	}
	for i := range 500 {
		// Names that share their starts, hold regex metacharacters and emoji.
		n := fmt.Sprintf("a.*b+ (c|d)? [%d] 🚀 %s", i, strings.Repeat("x", i%7))
		names = append(names, n)
		overlapping.WriteString("say " + n + " ")
	}
	names = append(names, "a", "a.", `\`, "🚀", "(", ".*")
	return map[string]h{
		"40,000 backticks":       {in: strings.Repeat("`", 40000)},
		"backticks and words":    {in: strings.Repeat("a ` b `` c ``` ", 3000)},
		"a 2,000-character link": {in: "see [the link](https://example.invalid/" + strings.Repeat("a/", 1000) + ") now"},
		"a 2,000-character URL":  {in: "see https://example.invalid/" + strings.Repeat("ab", 1000) + " now"},
		"nested fences":          {in: "````\n```go\nfunc x() {}\n```\n````\nafter the fence"},
		"unclosed fence":         {in: "before\n```python\nprint('never closed')\nstill code"},
		"unclosed emphasis":      {in: strings.Repeat("**bold *it _under ~~strike ", 500)},
		"deep nesting":           {in: strings.Repeat("> - ", 300) + "deep text"},
		"deep brackets":          {in: strings.Repeat("[", 5000) + "text" + strings.Repeat("](x)", 5000)},
		"1,000 mentions":         {in: mentions.String() + "the end"},
		"500 overlapping names":  {in: overlapping.String() + "the end", names: protect.Names{Keep: names}},
		"separators":             {in: "one\u2028two\u2029three and\u0085four"},
		"noncharacters":          {in: "the \uffff end \ufffe and \ufdd0 too"},
		"invalid UTF-8":          {in: "bad \xff\xfe bytes \xc3 here and \xed\xa0\x80 a surrogate"},
		"NUL and controls":       {in: "nul \x00 bell \a escape \x1b[31m red"},
		"CRLF":                   {in: "- one\r\n- two\r\n\r\n> quote\r\n"},
		"only whitespace":        {in: " \t\n\n  \n"},
		"a table of empties":     {in: "|||\n|-|-|\n|||\n| x | |"},
		"long line":              {in: strings.Repeat("word ", 8000)},
	}
}

func TestHostileInput(t *testing.T) {
	for name, tc := range hostile() {
		d := protect.Parse(tc.in, tc.names)
		for fname, form := range forms(d) {
			same, err := form.restore(form.units)
			if err != nil || same != tc.in {
				t.Errorf("%s, %s: the identity round trip changed the input (%v)", name, fname, err)
			}
			got, err := form.restore(letters(form.units))
			if err != nil {
				t.Errorf("%s, %s: restoring: %v", name, fname, err)
				continue
			}
			for _, u := range d.Units() {
				for _, s := range u.Spans {
					if !strings.Contains(got, tc.in[s.Start:s.End]) {
						t.Errorf("%s, %s: span %q lost", name, fname, tc.in[s.Start:s.End])
					}
				}
			}
		}
	}
}

func TestHostileNamesAreText(t *testing.T) {
	in := "ask a.*b+ (c|d)? [1] 🚀 x and not ab"
	d := protect.Parse(in, protect.Names{Keep: []string{"a.*b+ (c|d)? [1] 🚀 x", ".*"}})
	got, err := d.RestorePlaceholders(letters(d.Placeholders()))
	if err != nil {
		t.Fatal(err)
	}
	if want := "ẋẋẋ a.*b+ (c|d)? [1] 🚀 x ẋẋẋ ẋẋẋ ẋẋ"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// BenchmarkParse shows the cost grows with the input's length, not faster:
// compare the ns/op of the sizes.
func BenchmarkParse(b *testing.B) {
	for _, size := range []int{1000, 10000, 40000} {
		for _, kind := range []struct {
			name, unit string
		}{
			{"prose", "the build of @ana is green at `v1.2.3` see https://example.invalid/x "},
			{"backticks", "`"},
			{"brackets", "[a]("},
			{"emphasis", "**a *b _c "},
		} {
			in := strings.Repeat(kind.unit, size/len(kind.unit)+1)[:size]
			b.Run(fmt.Sprintf("%s/%d", kind.name, size), func(b *testing.B) {
				for b.Loop() {
					d := protect.Parse(in, workspace)
					if _, err := d.RestorePlaceholders(d.Placeholders()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
