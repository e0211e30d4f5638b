package protect

import (
	"errors"
	"fmt"
	"html"
	"regexp"
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
			placeholder(&b, d.first[k]+i, d.src[s.Start:s.End])
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
	first := d.first[k]
	pieces := cut(t)
	seen := make([]bool, len(u.Spans))
	var kept []piece
	var carry strings.Builder
	for _, p := range pieces {
		carry.WriteString(p.text)
		i := p.id - first
		if p.id == 0 || i < 0 || i >= len(u.Spans) || seen[i] {
			continue // the end, or a placeholder not of this unit, or a duplicate
		}
		seen[i] = true
		kept = append(kept, piece{text: carry.String(), id: p.id})
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
		core := strings.TrimSpace(clean(p.text))
		var before, after string // the original's whitespace around this text
		if n > 0 {
			before = d.spaceAfter(u, kept[n-1].id-first)
		}
		if p.id != 0 {
			after = d.spaceBefore(u, p.id-first)
		}
		switch {
		case core != "":
			b.WriteString(before + core + after)
		case n > 0 && p.id != 0:
			// Two spans side by side: the original's space between, if any.
			if before != "" {
				b.WriteString(before)
			} else {
				b.WriteString(after)
			}
		}
		if p.id != 0 {
			s := u.Spans[p.id-first]
			b.WriteString(d.src[s.Start:s.End])
		}
	}
	return b.String(), nil
}

// cut splits a translation at its placeholders. A <span ... id="pN">
// element is one placeholder up to its </span>; any other tag is dropped.
func cut(t string) []piece {
	var out []piece
	var text strings.Builder
	at := 0
	for at < len(t) {
		loc := tag.FindStringIndex(t[at:])
		if loc == nil {
			break
		}
		text.WriteString(t[at : at+loc[0]])
		tg := t[at+loc[0] : at+loc[1]]
		at += loc[1]
		m := tagID.FindStringSubmatch(tg)
		if m == nil {
			continue
		}
		id, err := strconv.Atoi(m[2])
		if err != nil || id == 0 {
			continue
		}
		if strings.EqualFold(m[1], "span") && !strings.HasSuffix(strings.TrimSpace(tg[:len(tg)-1]), "/") {
			if end := strings.Index(strings.ToLower(t[at:]), "</span"); end >= 0 {
				at += end
				if gt := strings.IndexByte(t[at:], '>'); gt >= 0 {
					at += gt + 1
				}
			}
		}
		out = append(out, piece{text: text.String(), id: id})
		text.Reset()
	}
	text.WriteString(t[at:])
	return append(out, piece{text: text.String()})
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

// spaceBefore and spaceAfter are the whitespace around span i of unit u in
// the original, "" where the span touches the unit's edge or a word.
func (d *Document) spaceBefore(u Unit, i int) string {
	s := u.Spans[i]
	return d.src[u.Start:s.Start][len(strings.TrimRightFunc(d.src[u.Start:s.Start], unicode.IsSpace)):]
}

func (d *Document) spaceAfter(u Unit, i int) string {
	s := u.Spans[i]
	rest := d.src[s.End:u.End]
	return rest[:len(rest)-len(strings.TrimLeftFunc(rest, unicode.IsSpace))]
}
