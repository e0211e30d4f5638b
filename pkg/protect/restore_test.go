package protect_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/protect"
)

// leaked finds a translator's markup in a restored text: a tag, a
// placeholder's id, an attribute, an entity.
var leaked = regexp.MustCompile(`(?i)<|>|id\s*=|translate\s*=|\bp[0-9]+\b|&[#a-z0-9]+;`)

// noLeak fails t when got has markup that in does not, or more of a
// translator's marks (* # @ _ ~ |) than in.
func noLeak(t *testing.T, in, got string) {
	t.Helper()
	if len(leaked.FindAllString(got, -1)) > len(leaked.FindAllString(in, -1)) {
		t.Errorf("restoring %q leaked markup: %q", in, got)
	}
	for _, m := range "*#@_~|`" {
		if g, w := strings.Count(got, string(m)), strings.Count(in, string(m)); g != w {
			t.Errorf("restoring %q: got %d %q in %q, want %d", in, g, m, got, w)
		}
	}
}

func TestRestorePlaceholders(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		translated []string
		want       string
	}{
		{"as is", "Run `make build` now", []string{`Ejecuta <b id="p1"/> ahora`}, "Ejecuta `make build` ahora"},
		{"upper case", "Run `make build` now", []string{`EJECUTA <B ID="P1"/> AHORA`}, "EJECUTA `make build` AHORA"},
		{"spaces inside the tag", "Run `make build` now", []string{`Ejecuta < b  id = 'p1' / > ahora`}, "Ejecuta `make build` ahora"},
		{"spaces lost around it", "Run `make build` now", []string{`Ejecuta<b id="p1"/>ahora`}, "Ejecuta `make build` ahora"},
		{"spaces added inside emphasis", "**Important:** read", []string{`<b id="p1"/> Importante: <b id="p2"/> lee`}, "**Importante:** lee"},
		{"reordered", "Tell @ana about `x`", []string{`Sobre <b id="p2"/> dile a <b id="p1"/>`}, "Sobre `x` dile a @ana"},
		{"side by side after reordering", "the `a` big `b` thing", []string{`la cosa <b id="p2"/><b id="p1"/> grande`}, "la cosa `b` `a` grande"},
		{"duplicated", "Run `make build` now", []string{`Ejecuta <b id="p1"/> ahora <b id="p1"/>`}, "Ejecuta `make build` ahora"},
		{"a closing tag added", "Run `make build` now", []string{`Ejecuta <b id="p1"></b> ahora`}, "Ejecuta `make build` ahora"},
		{"not self-closing", "Run `make build` now", []string{`Ejecuta <b id="p1"> ahora`}, "Ejecuta `make build` ahora"},
		{"a placeholder the unit has not", "one `a`\n\ntwo `b`", []string{`uno <b id="p1"/> <b id="p2"/>`, `dos <b id="p1"/> <b id="p7"/>`}, "uno `a`\n\ndos `b`"},
		{"zero-padded id", "Run `x` now", []string{`Ejecuta <b id="p01"/> ahora`}, "Ejecuta `x` ahora"},
		{"Apertium's marks", "the house of `x`", []string{`la *casa de #hogar @de <b id="p1"/>`}, "la casa de hogar de `x`"},
		{"other tags", "the house", []string{`<p>la <i>casa</i><br/></p>`}, "la casa"},
		{"entities", "Tom's house & car", []string{`la casa &amp; el coche de Tom&#39;s&nbsp;ya`}, "la casa & el coche de Tom's\u00a0ya"},
		{"an escaped tag is no placeholder", "the `x` house", []string{`la &lt;b id="p9"/&gt; casa <b id="p1"/>`}, `la b id="p9"/ casa ` + "`x`"},
		{"line breaks", "the big house", []string{"la casa\ngrande\u2028ya"}, "la casa grande ya"},
		{"leading and trailing spaces", "the house", []string{"  la casa \n"}, "la casa"},
		{"a table cell's pipe", "| a | b |\n|---|---|\n| the house | the car |", []string{"a", "b", "la | casa", "el coche"}, "| a | b |\n|---|---|\n| la  casa | el coche |"},
	} {
		d := protect.Parse(tc.in, protect.Names{})
		got, err := d.RestorePlaceholders(tc.translated)
		if err != nil {
			t.Errorf("%s: RestorePlaceholders(%q) of %q: %v", tc.name, tc.translated, tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: RestorePlaceholders(%q) of %q = %q, want %q", tc.name, tc.translated, tc.in, got, tc.want)
		}
	}
}

func TestRestoreHTML(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		translated []string
		want       string
	}{
		{"as is", "Run `make build` now", []string{`Ejecuta <span translate="no" id="p1">` + "`make build`" + `</span> ahora`}, "Ejecuta `make build` ahora"},
		{"the span's content changed", "Run `make build` now", []string{`Ejecuta <span translate="no" id="p1">` + "`hacer construir`" + `</span> ahora`}, "Ejecuta `make build` ahora"},
		{"attributes reordered and recased", "ask @ana now", []string{`pregunta a <SPAN ID="p1" TRANSLATE="NO">@ana</SPAN> ya`}, "pregunta a @ana ya"},
		{"escaped text", "a < b & c", []string{`a <span translate="no" id="p1">&lt;</span> b &amp; c`}, "a < b & c"},
		{"reordered", "Tell @ana about `x`", []string{`Sobre <span translate="no" id="p2">x</span> dile a <span translate="no" id="p1">@ana</span>`}, "Sobre `x` dile a @ana"},
		{"a span without its end", "Run `make` now", []string{`Ejecuta <span translate="no" id="p1">` + "`make`" + ` ahora`}, "Ejecuta `make` ahora"},
	} {
		d := protect.Parse(tc.in, protect.Names{})
		got, err := d.RestoreHTML(tc.translated)
		if err != nil {
			t.Errorf("%s: RestoreHTML(%q) of %q: %v", tc.name, tc.translated, tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: RestoreHTML(%q) of %q = %q, want %q", tc.name, tc.translated, tc.in, got, tc.want)
		}
	}
}

func TestRestoreRefusesALostSpan(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		translated []string
	}{
		{"dropped", "Run `make build` now", []string{"Ejecuta ahora"}},
		{"mangled id", "Run `make build` now", []string{`Ejecuta <b id="q1"/> ahora`}},
		{"turned into text", "Run `make build` now", []string{`Ejecuta b id="p1" ahora`}},
		{"lost in the second unit", "one `a`\n\ntwo `b`", []string{`uno <b id="p1"/>`, `dos`}},
		{"one of two", "**bold** text", []string{`<b id="p1"/>negrita texto`}},
		{"too few units", "one\n\ntwo", []string{"uno"}},
		{"too many units", "one", []string{"uno", "dos"}},
	} {
		d := protect.Parse(tc.in, protect.Names{})
		for name, restore := range map[string]func([]string) (string, error){"placeholders": d.RestorePlaceholders, "html": d.RestoreHTML} {
			got, err := restore(tc.translated)
			if !errors.Is(err, protect.ErrNotRestored) || got != "" {
				t.Errorf("%s: %s: restoring %q of %q: got %q, %v; want ErrNotRestored", tc.name, name, tc.translated, tc.in, got, err)
			}
		}
	}
}

// translators are what a machine translator may do to a unit, placeholders
// included.
var translators = map[string]func(string) string{
	"upper case":      strings.ToUpper,
	"lower case":      strings.ToLower,
	"no spaces":       func(s string) string { return strings.ReplaceAll(s, " ", "") },
	"double spaces":   func(s string) string { return strings.ReplaceAll(s, " ", "  ") },
	"spaced tags":     func(s string) string { return strings.NewReplacer("<", "< ", "/>", " / >", `="`, ` = "`).Replace(s) },
	"reversed words":  reverseWords,
	"marks":           apertiumMarks,
	"tags doubled":    func(s string) string { return tagRE.ReplaceAllString(s, "$0$0") },
	"tags unclosed":   func(s string) string { return strings.ReplaceAll(s, "/>", ">") },
	"extra markup":    func(s string) string { return "<p>" + s + "<br></p>" },
	"entities spelt":  func(s string) string { return strings.ReplaceAll(s, "&amp;", "&#38;") },
	"newlines":        func(s string) string { return strings.ReplaceAll(s, " ", "\n") },
	"tags dropped":    func(s string) string { return tagRE.ReplaceAllString(s, "") },
	"first tag moved": func(s string) string { return moveFirstTag(s) },
}

var tagRE = regexp.MustCompile(`<b id="p[0-9]+"/>|<span translate="no" id="p[0-9]+">[^<]*</span>`)

// apertiumMarks marks words as Apertium does: *unknown, #not generated,
// @not in the bilingual dictionary.
func apertiumMarks(s string) string {
	f := strings.Split(s, " ")
	for i := range f {
		if f[i] != "" && f[i][0] != '<' && f[i][0] != '&' {
			f[i] = string("*#@"[i%3]) + f[i]
		}
	}
	return strings.Join(f, " ")
}

func reverseWords(s string) string {
	// Keep each tag one word.
	f := strings.Fields(tagRE.ReplaceAllStringFunc(s, func(t string) string { return strings.ReplaceAll(t, " ", "\x00") }))
	for i, j := 0, len(f)-1; i < j; i, j = i+1, j-1 {
		f[i], f[j] = f[j], f[i]
	}
	return strings.ReplaceAll(strings.Join(f, " "), "\x00", " ")
}

func moveFirstTag(s string) string {
	loc := tagRE.FindStringIndex(s)
	if loc == nil {
		return s
	}
	return s[:loc[0]] + s[loc[1]:] + " " + s[loc[0]:loc[1]]
}

// TestNothingLeaks runs every message through translators that mangle
// their placeholders: each restores, keeping every span, or errors;
// nothing of a translator's markup reaches a result.
func TestNothingLeaks(t *testing.T) {
	for _, in := range corpus() {
		d := protect.Parse(in, workspace)
		for tname, tr := range translators {
			for fname, form := range forms(d) {
				translated := make([]string, len(form.units))
				for i, u := range form.units {
					translated[i] = tr(u)
				}
				got, err := form.restore(translated)
				if err != nil {
					if !errors.Is(err, protect.ErrNotRestored) || got != "" {
						t.Errorf("%s, %s: %q: got %q, %v", tname, fname, in, got, err)
					}
					continue
				}
				noLeak(t, in, got)
				for _, u := range d.Units() {
					for _, s := range u.Spans {
						if span := in[s.Start:s.End]; strings.Count(got, span) < 1 {
							t.Errorf("%s, %s: %q: span %q lost: %q", tname, fname, in, span, got)
						}
					}
				}
			}
		}
	}
}

// corpus is a few messages of every kind.
func corpus() []string {
	return []string{
		"Run `make build` before the **Important:** meeting, @here",
		"- see [the docs](https://example.invalid/a \"t\") and ask Frank Will\n- then check /var/log/x.log",
		"| the host | the port |\n|---|---|\n| `db.internal` | 5432 is open |",
		"> Tom & Jerry <3 the *house* of ~~the~~ ~~cat~~\n> :tada: 🇪🇸 #general",
		"# Heading with $HOME\n\nSet MAX_RETRIES to %d and {{name}} today",
		"Deploy Bot 🚀 says: v1.2.3 is live on 10.0.0.1:8080",
		"ok",
	}
}

// TestParseConcurrently: Parse shares one goldmark parser; run with -race.
func TestParseConcurrently(t *testing.T) {
	done := make(chan string)
	for range 4 {
		go func() {
			var out strings.Builder
			for _, in := range corpus() {
				d := protect.Parse(in, workspace)
				got, _ := d.RestorePlaceholders(d.Placeholders())
				out.WriteString(got)
			}
			done <- out.String()
		}()
	}
	want := strings.Join(corpus(), "")
	for range 4 {
		if got := <-done; got != want {
			t.Errorf("concurrent round trips: got %q, want %q", got, want)
		}
	}
}
