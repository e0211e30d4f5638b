package protect

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// patterns find protected classes that may sit inside a word or span
// several whitespace-separated tokens. Go's regexp runs in linear time.
var patterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(?:[a-z][a-z0-9+.\-]*://|www\.|mailto:)[^\s<>"]+`), // URLs
	regexp.MustCompile(`[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)+`),
	regexp.MustCompile(`@[\p{L}\p{N}_][\p{L}\p{N}_.\-]*`), // @mentions, @here
	regexp.MustCompile(`#[\p{L}\p{N}_][\p{L}\p{N}_.\-]*`), // #channels
	regexp.MustCompile(`:[A-Za-z0-9_+\-]+:`),              // :shortcodes:
	regexp.MustCompile(`\{\{[^{}\n]*\}\}|\{[\p{L}\p{N}_.]*\}`),
	regexp.MustCompile(`\$\{[^}\s]*\}|\$\([^)\s]*\)|\$[A-Za-z_][A-Za-z0-9_]*`),
	regexp.MustCompile(`%[-+#0]*[0-9]*(?:\.[0-9]+)?[sdvfqxXcbeEgGtTpuoi]\b|%[A-Za-z_][A-Za-z0-9_]*%`),
	regexp.MustCompile(`(?i)\b[a-z]:\\[^\s]*|\\\\[^\s]+`), // Windows paths, UNC paths
}

// alwaysMarkup are characters that are protected wherever they appear in
// text: a translator's marks (Apertium's *, # and @), markdown's own
// punctuation and backslashes. Since none of them is ever sent, any of them
// in a translation is a translator's mark, and restoring removes it.
const alwaysMarkup = "*#@|\\`_~<>"

// protectInline marks, inside every run of prose, what must not be
// translated, and returns the occurrences of fixed terms, in order.
func protectInline(src string, class []uint8, names []string, fixed map[string]string) []replacement {
	m := newNameMatcher(names)
	var repl []replacement
	if len(fixed) > 0 {
		end := 0
		m.found = func(s, e int, name string) {
			if s < end {
				return // inside an earlier, longer name: that one is what it is
			}
			end = e
			if text, ok := fixed[name]; ok {
				repl = append(repl, replacement{start: s, end: e, text: text})
			}
		}
	}
	for i := 0; i < len(src); {
		if class[i] != prose {
			i++
			continue
		}
		j := i
		for j < len(src) && class[j] == prose {
			j++
		}
		m.offset = i
		protectRun(src[i:j], class[i:j], m)
		i = j
	}
	return repl
}

// protectRun marks the protected bytes of one run of prose, run, whose
// classes are class.
func protectRun(run string, class []uint8, m *nameMatcher) {
	mark := func(s, e int) { fill(class, s, e, markup) }

	// Characters: marks, controls, invalid UTF-8, emoji sequences.
	for i := 0; i < len(run); {
		r, w := utf8.DecodeRuneInString(run[i:])
		switch {
		case r == utf8.RuneError && w <= 1, strings.ContainsRune(alwaysMarkup, r), unsafeRune(r):
			mark(i, i+w)
		case startsEmoji(run[i:]):
			e := i + emojiLen(run[i:])
			mark(i, e)
			i = e
			continue
		}
		i += w
	}
	for _, re := range patterns {
		for _, loc := range re.FindAllStringIndex(run, -1) {
			mark(loc[0], loc[0]+len(trimTrailing(run[loc[0]:loc[1]])))
		}
	}
	// Tokens that are not words of a language.
	for i := 0; i < len(run); {
		r, w := utf8.DecodeRuneInString(run[i:])
		if unicode.IsSpace(r) {
			i += w
			continue
		}
		j := i
		for j < len(run) {
			r, w := utf8.DecodeRuneInString(run[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += w
		}
		tok := run[i:j]
		lead := len(tok) - len(strings.TrimLeft(tok, `("'“‘«¿¡[`))
		core := trimTrailing(tok[lead:])
		if core != "" && codeLike(core) {
			mark(i+lead, i+lead+len(core))
		}
		i = j
	}
	m.mark(run, mark)
}

// trimTrailing trims a token's sentence punctuation, and a closing
// parenthesis that does not close one of the token's own.
func trimTrailing(s string) string {
	for s != "" {
		r, w := utf8.DecodeLastRuneInString(s)
		switch {
		case strings.ContainsRune(`.,;:!?"'”’»…`, r):
		case r == ')' && strings.Count(s, "(") < strings.Count(s, ")"):
		case r == ']' && strings.Count(s, "[") < strings.Count(s, "]"):
		default:
			return s
		}
		s = s[:len(s)-w]
	}
	return s
}

// codeLike reports whether a token (without its sentence punctuation) is
// not a word of a language: numbers, versions, addresses, hashes, paths,
// identifiers, flags.
func codeLike(t string) bool {
	if !hasLetterIn(t) {
		return false // punctuation: what of it matters is in alwaysMarkup
	}
	if strings.ContainsAny(t, "0123456789_=<>{}[]$%^|~+&") {
		return true
	}
	if t[0] == '-' && len(t) > 1 || t[0] == '.' && len(t) > 1 {
		return true // --flags, .dotfiles
	}
	if strings.Contains(t, "::") || strings.Contains(t, "->") || strings.HasSuffix(t, ")") && strings.Contains(t, "(") && t[0] != '(' {
		return true
	}
	if strings.Contains(t, "/") && pathLike(t) {
		return true
	}
	if kebab(t) {
		return true
	}
	prev := rune(0)
	upperRun := 0
	for i, r := range t {
		switch {
		case r == '.' && i > 0 && isAlnum(prev) && i+1 < len(t) && isAlnum(rune(t[i+1])):
			return true // dotted.names, file.ext, domains
		case unicode.IsUpper(r):
			if unicode.IsLower(prev) {
				return true // camelCase, PascalCase
			}
			upperRun++
		case unicode.IsLower(r):
			if upperRun >= 2 {
				return true // XMLParser
			}
			upperRun = 0
		default:
			upperRun = 0
		}
		prev = r
	}
	return false
}

// kebab reports a kebab-case name of two hyphens or more, lower-case
// ASCII only, with no function word among its parts (user-profile-api,
// docker-compose-dev): service and command names. One hyphen is a word of
// a language (on-call, e-mail), and so is a phrase with a function word
// (state-of-the-art, up-to-date, mother-in-law).
func kebab(t string) bool {
	if strings.Count(t, "-") < 2 || strings.Contains(t, "--") || t[0] == '-' || t[len(t)-1] == '-' {
		return false
	}
	for _, r := range t {
		if (r < 'a' || r > 'z') && r != '-' {
			return false
		}
	}
	for _, part := range strings.Split(t, "-") {
		if functionWords[part] {
			return false
		}
	}
	return true
}

// functionWords are words that join a phrase with hyphens, in the
// languages chat mixes most.
var functionWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "in": true, "on": true, "at": true, "by": true,
	"for": true, "and": true, "or": true, "with": true, "de": true, "la": true, "el": true, "le": true,
	"les": true, "du": true, "des": true, "en": true, "y": true, "et": true, "von": true, "und": true, "zu": true,
}

// pathLike tells a path (/var/log, ./x, ~/x, src/main.go, a/b/c) from
// words joined by a slash (and/or).
func pathLike(t string) bool {
	for _, p := range []string{"/", "./", "../", "~/"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	if strings.Count(t, "/") >= 2 {
		return true
	}
	last := t[strings.LastIndexByte(t, '/')+1:]
	return strings.Contains(last, ".")
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_'
}

// unsafeRune reports characters a translator may drop or turn into
// something else: controls, format characters (bidi marks, zero-width
// ones), line and paragraph separators, noncharacters, the replacement
// character.
func unsafeRune(r rune) bool {
	return r != '\t' && unicode.IsControl(r) || unicode.Is(unicode.Cf, r) ||
		r == '\u2028' || r == '\u2029' || r == utf8.RuneError ||
		r >= 0xFDD0 && r <= 0xFDEF || r&0xFFFE == 0xFFFE
}

// nameMatcher finds the workspace's names in text: whole words,
// case-sensitive, longest first, every match protected (overlapping ones
// too).
type nameMatcher struct {
	byFirst [256][]string // names by their first byte, longest first
	// found, when set, is told of each match, at offset plus its position
	// in the run.
	found  func(s, e int, name string)
	offset int
}

func newNameMatcher(names []string) *nameMatcher {
	m := &nameMatcher{}
	sorted := append([]string(nil), names...)
	sort.SliceStable(sorted, func(i, j int) bool { return len(sorted[i]) > len(sorted[j]) })
	for _, n := range sorted {
		m.byFirst[n[0]] = append(m.byFirst[n[0]], n)
	}
	return m
}

func (m *nameMatcher) mark(run string, mark func(s, e int)) {
	prev := rune(-1)
	for i := 0; i < len(run); {
		r, w := utf8.DecodeRuneInString(run[i:])
		for _, n := range m.byFirst[run[i]] {
			if !strings.HasPrefix(run[i:], n) {
				continue
			}
			first, _ := utf8.DecodeRuneInString(n)
			last, _ := utf8.DecodeLastRuneInString(n)
			if isWordRune(first) && prev >= 0 && isWordRune(prev) {
				continue
			}
			if next, _ := utf8.DecodeRuneInString(run[i+len(n):]); isWordRune(last) && i+len(n) < len(run) && isWordRune(next) {
				continue
			}
			mark(i, i+len(n))
			if m.found != nil {
				m.found(m.offset+i, m.offset+i+len(n), n)
			}
			break
		}
		prev = r
		i += w
	}
}
