package protect

import (
	"errors"
	"fmt"
	"html"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// ErrNotRestored is returned, wrapped with the unit and the span, when a
// translation cannot be restored: a protected span did not come back, or the
// translation has another number of units. The caller shows the original.
var ErrNotRestored = errors.New("protect: translation not restored")

// Placeholders returns each unit for Apertium: its text HTML-escaped, each
// protected span replaced by an empty element <b id="pN"/>. APY deformats
// its input as HTML by default: an empty element is a "superblank" that
// the pipeline carries through untouched, in place, without breaking the
// sentence around it (an unknown word such as ZXP1ZX would: "the big
// ZXP1ZX meeting" loses the adjective's agreement). The escaping keeps the
// text's own <, > and & text, not markup.
func (d *Document) Placeholders() []string {
	return d.forms(func(b *strings.Builder, id int, _ string) {
		fmt.Fprintf(b, `<b id="p%d"/>`, id)
	})
}

// HTML returns each unit for Amazon Translate with ContentType text/html:
// its text HTML-escaped, each protected span an element that Amazon
// Translate documents as not translated, <span translate="no" id="pN">…</span>.
func (d *Document) HTML() []string {
	return d.forms(func(b *strings.Builder, id int, span string) {
		fmt.Fprintf(b, `<span translate="no" id="p%d">%s</span>`, id, html.EscapeString(span))
	})
}

func (d *Document) forms(placeholder func(b *strings.Builder, id int, span string)) []string {
	out := make([]string, len(d.units))
	for k, u := range d.units {
		var b strings.Builder
		at := u.Start
		for i, s := range u.Spans {
			b.WriteString(html.EscapeString(d.src[at:s.Start]))
			placeholder(&b, i+1, d.spanText(s))
			at = s.End
		}
		b.WriteString(html.EscapeString(d.src[at:u.End]))
		out[k] = b.String()
	}
	return out
}

// RestorePlaceholders puts the document back together from the
// translations of its Placeholders, one per unit. See restore for what it
// repairs; it returns an error wrapping ErrNotRestored when it cannot.
func (d *Document) RestorePlaceholders(translated []string) (string, error) {
	return d.restore(translated)
}

// RestoreHTML puts the document back together from the translations of its
// HTML, one per unit. Every span element is replaced by the original bytes
// of its span, whatever the translator did inside it.
func (d *Document) RestoreHTML(translated []string) (string, error) {
	return d.restore(translated)
}

// RestoresUnit reports whether translated, the translation of unit k's
// form, restores: every span of the unit comes back.
func (d *Document) RestoresUnit(k int, translated string) bool {
	_, err := d.restoreUnit(k, translated)
	return err == nil
}

// tag finds an HTML tag of a translation. The text of the original is
// escaped, so every tag in a translation is one of ours or the
// translator's.
var tag = regexp.MustCompile(`<[^<>]*>`)

// tagID reads a placeholder's number from a tag, whatever the translator
// did to its case and spaces: <b id="p3"/>, <B ID = 'P3' />, <b id=p3>.
var tagID = regexp.MustCompile(`(?i)^<\s*([a-z]+)\b[^>]*?\bid\s*=\s*["']?\s*p\s*0*([0-9]+)`)

// piece is a translation cut at its placeholders: the text before the
// placeholder of span id (0 for the text after the last one).
type piece struct {
	text string
	id   int
}

// restore rebuilds the document: the structure and every span byte-
// identical, each unit's text as translated. It repairs a translation that
// reordered, duplicated (the first is kept), respaced or recased
// placeholders, and removes every other tag and every translator's mark
// (*, #, @ and the rest of alwaysMarkup, which were never sent) and line
// breaks from the text. Around each span it restores the whitespace the
// original had (none where the span touched a word, as emphasis markers
// do). A span that is missing is an error.
func (d *Document) restore(translated []string) (string, error) {
	if len(translated) != len(d.units) {
		return "", fmt.Errorf("%w: %d translations for %d units", ErrNotRestored, len(translated), len(d.units))
	}
	var b strings.Builder
	at := 0
	for k, u := range d.units {
		b.WriteString(d.src[at:u.Start])
		s, err := d.restoreUnit(k, translated[k])
		if err != nil {
			return "", err
		}
		b.WriteString(s)
		at = u.End
	}
	b.WriteString(d.src[at:])
	return b.String(), nil
}

func (d *Document) restoreUnit(k int, t string) (string, error) {
	u := d.units[k]
	const first = 1 // each unit numbers its spans p1, p2, ...
	seen := make([]bool, len(u.Spans))
	var kept []piece
	var carry strings.Builder
	toks := tokens(t)
	for n := 0; n < len(toks); n++ {
		tk := toks[n]
		if tk.kind == textToken {
			carry.WriteString(tk.text)
			continue
		}
		if tk.kind != openToken && tk.kind != emptyToken {
			continue // a closing tag or another tag: the translator's
		}
		i := tk.id - first
		if i < 0 || i >= len(u.Spans) {
			continue // a placeholder not of this unit
		}
		if tk.kind == openToken {
			n = skipContent(toks, n, html.EscapeString(d.spanText(u.Spans[i])))
		}
		if seen[i] {
			continue // a duplicate
		}
		seen[i] = true
		kept = append(kept, piece{text: carry.String(), id: tk.id})
		carry.Reset()
	}
	kept = append(kept, piece{text: carry.String()})
	for i, ok := range seen {
		if !ok {
			s := u.Spans[i]
			return "", fmt.Errorf("%w: unit %d: span p%d %q did not come back", ErrNotRestored, k+1, first+i, d.src[s.Start:s.End])
		}
	}

	var b strings.Builder
	for n, p := range kept {
		text := clean(p.text)
		core := strings.TrimSpace(text)
		// The whitespace around this text: the original's where the span
		// beside it had text on that side, else the translator's.
		before := text[:len(text)-len(strings.TrimLeftFunc(text, unicode.IsSpace))]
		after := text[len(strings.TrimRightFunc(text, unicode.IsSpace)):]
		if n == 0 {
			before = ""
		} else if ws, ok := d.spaceAfter(u, kept[n-1].id-first); ok {
			before = ws
		}
		if p.id == 0 {
			after = ""
		} else if ws, ok := d.spaceBefore(u, p.id-first); ok {
			after = ws
		}
		switch {
		case core != "":
			b.WriteString(before + core + after)
		case n > 0 && p.id != 0:
			// Two spans side by side.
			if before != "" {
				b.WriteString(before)
			} else {
				b.WriteString(after)
			}
		}
		if p.id != 0 {
			b.WriteString(d.spanText(u.Spans[p.id-first]))
		}
	}
	return b.String(), nil
}

// Kinds of the tokens of a translation.
const (
	textToken  = iota
	emptyToken // a placeholder: <b id="p3"/>
	openToken  // a placeholder with content: <span translate="no" id="p3">
	closeToken // </span>, </b>
	otherToken // any other tag: the translator's
)

type token struct {
	kind int
	text string
	id   int
}

// tokens cuts a translation into text and tags.
func tokens(t string) []token {
	var out []token
	for t != "" {
		loc := tag.FindStringIndex(t)
		if loc == nil {
			break
		}
		if loc[0] > 0 {
			out = append(out, token{kind: textToken, text: t[:loc[0]]})
		}
		tg := t[loc[0]:loc[1]]
		t = t[loc[1]:]
		tk := token{kind: otherToken, text: tg}
		if m := tagID.FindStringSubmatch(tg); m != nil {
			if id, err := strconv.Atoi(m[2]); err == nil && id > 0 {
				tk.id = id
				tk.kind = openToken
				if strings.HasSuffix(strings.TrimSpace(tg[:len(tg)-1]), "/") {
					tk.kind = emptyToken
				}
			}
		} else if closing.MatchString(tg) {
			tk.kind = closeToken
		}
		out = append(out, tk)
	}
	if t != "" {
		out = append(out, token{kind: textToken, text: t})
	}
	return out
}

var closing = regexp.MustCompile(`^<\s*/`)

// skipContent returns the index of the last token of the content of the
// placeholder opened at toks[n]: its closing tag when one follows before
// the next placeholder; else, when the text right after it begins with the
// span's escaped content (the translator lost the closing tag), that
// content is cut from it.
func skipContent(toks []token, n int, content string) int {
	for m := n + 1; m < len(toks); m++ {
		switch toks[m].kind {
		case closeToken:
			return m
		case emptyToken, openToken:
			m = len(toks)
		}
	}
	if n+1 < len(toks) && toks[n+1].kind == textToken && content != "" {
		if rest, ok := strings.CutPrefix(strings.TrimLeftFunc(toks[n+1].text, unicode.IsSpace), content); ok {
			toks[n+1].text = rest
		}
	}
	return n
}

// clean turns a translated text back into plain text: entities unescaped,
// a stray < or > of a broken tag, a translator's marks and line breaks
// removed.
func clean(s string) string {
	s = html.UnescapeString(strings.NewReplacer("<", "", ">", "").Replace(s))
	return strings.Map(func(r rune) rune {
		switch {
		case strings.ContainsRune(alwaysMarkup, r):
			return -1
		case r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029':
			return ' '
		}
		return r
	}, s)
}

// spanText is what span s reads in every result: its bytes, with each
// fixed glossary term in it rendered.
func (d *Document) spanText(s Span) string {
	i := sort.Search(len(d.fixed), func(i int) bool { return d.fixed[i].end > s.Start })
	if i == len(d.fixed) || d.fixed[i].start >= s.End {
		return d.src[s.Start:s.End]
	}
	var b strings.Builder
	at := s.Start
	for ; i < len(d.fixed) && d.fixed[i].start < s.End; i++ {
		f := d.fixed[i]
		b.WriteString(d.src[at:f.start])
		b.WriteString(f.text)
		at = f.end
	}
	b.WriteString(d.src[at:s.End])
	return b.String()
}

// spaceBefore and spaceAfter are the whitespace around span i of unit u in
// the original, "" where the span touches a word; false where the span
// touches the unit's edge, which says nothing about the space it wants.
func (d *Document) spaceBefore(u Unit, i int) (string, bool) {
	s := u.Spans[i]
	text := d.src[u.Start:s.Start]
	return text[len(strings.TrimRightFunc(text, unicode.IsSpace)):], s.Start > u.Start
}

func (d *Document) spaceAfter(u Unit, i int) (string, bool) {
	s := u.Spans[i]
	rest := d.src[s.End:u.End]
	return rest[:len(rest)-len(strings.TrimLeftFunc(rest, unicode.IsSpace))], s.End < u.End
}
