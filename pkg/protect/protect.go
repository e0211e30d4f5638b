package protect

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Names are the workspace's own words that are never translated: members',
// guests' and bots' display names, channel names and the glossary's keep
// terms. They match as whole words, case-sensitively, longest first; a term
// is matched as text, never compiled into a pattern.
type Names struct {
	Members  []string
	Guests   []string
	Bots     []string
	Channels []string
	Keep     []string
	// Fixed maps a glossary term to its rendering in the document's target
	// language: the term is protected like a name, and every result has
	// the rendering where the original has the term.
	Fixed map[string]string
}

// all returns every non-blank name once.
func (n Names) all() []string {
	seen := map[string]bool{}
	var out []string
	fixed := make([]string, 0, len(n.Fixed))
	for t := range n.Fixed {
		fixed = append(fixed, t)
	}
	sort.Strings(fixed)
	for _, list := range [][]string{n.Members, n.Guests, n.Bots, n.Channels, n.Keep, fixed} {
		for _, s := range list {
			if seen[s] || isBlank(s) {
				continue
			}
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Span is a protected run of bytes of the original content, [Start, End).
type Span struct {
	Start, End int
}

// Unit is one translation unit: a sentence of a line of a paragraph, a
// heading, a list item's line, a quote's line or a table cell, [Start, End)
// in the original, with the protected spans inside it in order. The bytes of a unit outside
// its spans are the text a translator receives.
type Unit struct {
	Start, End int
	Spans      []Span
}

// Document is content split into translation units, protected spans and the
// structure between units, which every result keeps byte-identical.
type Document struct {
	src   string
	units []Unit
	// fixed are the occurrences of glossary terms with a fixed rendering,
	// in order: a span's result has each one's rendering in its place.
	fixed []replacement
}

// replacement is [start, end) of the source rendered as text.
type replacement struct {
	start, end int
	text       string
}

// byte classes of the source.
const (
	structure = iota // between units: kept, never sent
	markup           // inside a unit but not text: protected
	prose            // text a translator may change
)

// markdown is the parser: CommonMark with the GFM tables, strikethrough,
// autolinks and task lists. It is safe for concurrent use.
var markdown = goldmark.New(goldmark.WithExtensions(
	extension.Table, extension.Strikethrough, extension.Linkify, extension.TaskList,
))

// Parse splits content into translation units and protected spans. It never
// fails: any byte string, valid markdown or not, valid UTF-8 or not, gives a
// Document whose identity round trip is content itself.
func Parse(content string, names Names) *Document {
	src := []byte(content)
	class := make([]uint8, len(src))
	var lines []text.Segment

	root := markdown.Parser().Parse(text.NewReader(src), parser.WithContext(parser.NewContext()))
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindFencedCodeBlock, ast.KindCodeBlock, ast.KindHTMLBlock:
			return ast.WalkSkipChildren, nil // whole blocks stay as they are
		case ast.KindCodeSpan, ast.KindAutoLink, ast.KindRawHTML:
			return ast.WalkSkipChildren, nil // their bytes stay markup
		case ast.KindParagraph, ast.KindTextBlock, ast.KindHeading, east.KindTableCell:
			l := n.Lines()
			for i := 0; i < l.Len(); i++ {
				s := trimSegment(src, l.At(i))
				if s.Start < s.Stop {
					lines = append(lines, s)
					fill(class, s.Start, s.Stop, markup)
				}
			}
		case ast.KindText:
			s := n.(*ast.Text).Segment
			if s.Start >= 0 && s.Stop <= len(src) {
				for i := s.Start; i < s.Stop; i++ {
					if class[i] == markup {
						class[i] = prose
					}
				}
			}
		}
		return ast.WalkContinue, nil
	})

	sort.Slice(lines, func(i, j int) bool { return lines[i].Start < lines[j].Start })
	d := &Document{src: content}
	d.fixed = protectInline(content, class, names.all(), names.Fixed)

	end := 0
	for _, s := range lines {
		if s.Start < end {
			continue // a line seen twice (nested leaf blocks do not occur, but stay safe)
		}
		end = s.Stop
		for _, sn := range sentences(content, class, s.Start, s.Stop) {
			u, ok := makeUnit(content, class, sn[0], sn[1])
			if !ok {
				continue // nothing but protected bytes and punctuation: structure
			}
			d.units = append(d.units, u)
		}
	}
	return d
}

// sentences cuts the line [start, end) at its sentence ends: one or more
// of . ! ? … in prose (closing quotes and brackets after them included),
// then white space, then an upper-case letter, a digit or a protected
// byte. The white space between two sentences is structure: a translator
// sees each sentence alone. A full stop inside a protected span (v1.2, a
// path, a URL) is no sentence end.
func sentences(src string, class []uint8, start, end int) [][2]int {
	var out [][2]int
	from := start
	for i := start; i < end; {
		r, w := utf8.DecodeRuneInString(src[i:])
		if class[i] != prose || !strings.ContainsRune(".!?…", r) {
			i += w
			continue
		}
		j := i + w
		for j < end && class[j] == prose {
			r, w := utf8.DecodeRuneInString(src[j:])
			if !strings.ContainsRune(".!?…\"'”’»)]", r) {
				break
			}
			j += w
		}
		k := j
		for k < end {
			r, w := utf8.DecodeRuneInString(src[k:])
			if !unicode.IsSpace(r) {
				break
			}
			k += w
		}
		if k == j || k >= end {
			i = j
			continue
		}
		next, _ := utf8.DecodeRuneInString(src[k:])
		if class[k] == prose && !unicode.IsUpper(next) && !unicode.IsDigit(next) && !strings.ContainsRune("¿¡\"“«(", next) {
			i = k
			continue
		}
		out = append(out, [2]int{from, j})
		from, i = k, k
	}
	return append(out, [2]int{from, end})
}

// makeUnit makes the unit of the line [start, end): its spans are its
// maximal runs of protected bytes, runs separated by nothing but
// whitespace and punctuation joined into one. A line without a letter
// outside its spans is no unit.
func makeUnit(src string, class []uint8, start, end int) (Unit, bool) {
	u := Unit{Start: start, End: end}
	hasLetter := false
	for i := start; i < end; {
		if class[i] == prose {
			r, w := utf8.DecodeRuneInString(src[i:])
			if unicode.IsLetter(r) {
				hasLetter = true
			}
			i += w
			continue
		}
		j := i
		for j < end && class[j] != prose {
			j++
		}
		if n := len(u.Spans); n > 0 && !hasLetterIn(src[u.Spans[n-1].End:i]) {
			u.Spans[n-1].End = j
		} else {
			u.Spans = append(u.Spans, Span{Start: i, End: j})
		}
		i = j
	}
	return u, hasLetter
}

func hasLetterIn(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

func fill(class []uint8, start, end int, c uint8) {
	for i := start; i < end; i++ {
		class[i] = c
	}
}

// trimSegment trims whitespace at both ends of a line's segment.
func trimSegment(src []byte, s text.Segment) text.Segment {
	start, stop := s.Start, s.Stop
	if start < 0 {
		start = 0
	}
	if stop > len(src) {
		stop = len(src)
	}
	// Unicode's spaces too (U+2000, U+3000, NBSP): restoring trims them.
	for start < stop {
		r, w := utf8.DecodeRune(src[start:stop])
		if !unicode.IsSpace(r) {
			break
		}
		start += w
	}
	for stop > start {
		r, w := utf8.DecodeLastRune(src[start:stop])
		if !unicode.IsSpace(r) {
			break
		}
		stop -= w
	}
	return text.NewSegment(start, stop)
}

func isBlank(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// Source is the content the document was parsed from.
func (d *Document) Source() string { return d.src }

// Units are the document's translation units in order. The caller must not
// modify them.
func (d *Document) Units() []Unit { return d.units }
