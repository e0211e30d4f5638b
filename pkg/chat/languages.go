package chat

import (
	"cmp"
	"slices"

	"golang.org/x/text/language"
)

// Languages is a translator's set of target languages, each named by the code
// the translator uses (a BCP 47 tag: "es", "es-MX", "zh-TW"), with the rule
// that maps a reader's preferred language onto one of them.
//
// The zero value and nil support nothing. A Languages is immutable and safe
// for concurrent use.
type Languages struct {
	codes   []string
	tags    []language.Tag
	matcher language.Matcher
	// byMatch[i] is the index in codes of the matcher's i-th tag.
	byMatch []int
}

// NewLanguages returns the languages named by codes, in that order. Codes that
// are not well-formed BCP 47 tags and repeats are left out.
//
// The order does not change what Target picks: the matcher sees the codes
// sorted, so that a tie (fr-BE is as close to fr as to fr-CA) breaks the
// same way for a translator's list and for any subset of it stored beside a
// message (see PickLanguage).
func NewLanguages(codes ...string) *Languages {
	l := &Languages{}
	seen := map[string]bool{}
	for _, c := range codes {
		t, ok := parse(c)
		if !ok || seen[c] {
			continue
		}
		seen[c] = true
		l.codes = append(l.codes, c)
		l.tags = append(l.tags, t)
	}
	if len(l.tags) == 0 {
		return l
	}
	l.byMatch = make([]int, len(l.tags))
	for i := range l.byMatch {
		l.byMatch[i] = i
	}
	slices.SortFunc(l.byMatch, func(a, b int) int {
		return cmp.Or(cmp.Compare(l.tags[a].String(), l.tags[b].String()), cmp.Compare(l.codes[a], l.codes[b]))
	})
	sorted := make([]language.Tag, len(l.byMatch))
	for i, j := range l.byMatch {
		sorted[i] = l.tags[j]
	}
	l.matcher = language.NewMatcher(sorted)
	return l
}

// Codes returns the target codes, in the order given to NewLanguages.
func (l *Languages) Codes() []string {
	if l == nil {
		return nil
	}
	return append([]string(nil), l.codes...)
}

// Len returns the number of target languages.
func (l *Languages) Len() int {
	if l == nil {
		return 0
	}
	return len(l.codes)
}

// Target returns the code that serves a reader whose preferred language is
// tag, and false when none does (or tag is not a BCP 47 tag).
//
// The choice is CLDR's, through x/text's language.Matcher: the closest
// regional variant wins (es-AR reads es-MX when both es and es-MX exist, es
// otherwise; zh-HK reads zh-TW; pt-BR reads pt), and legacy or macro-language
// codes resolve (nb reads no, fil reads tl, iw reads he). A match the matcher
// rates High also crosses languages its data calls mutually intelligible
// (a Danish reader reads Norwegian when the translator has no Danish). A Low
// match is accepted only within one language, which covers a script the
// translator lacks (sr-Latn reads sr, zh-Hant reads zh); anything else would
// hand a reader a language they did not ask for.
func (l *Languages) Target(tag string) (string, bool) {
	if l == nil || l.matcher == nil || tag == "" {
		return "", false
	}
	t, ok := parse(tag)
	if !ok {
		return "", false
	}
	_, m, conf := l.matcher.Match(t)
	i := l.byMatch[m]
	switch conf {
	case language.Exact, language.High:
		return l.codes[i], true
	case language.Low:
		if sameBase(t, l.tags[i]) {
			return l.codes[i], true
		}
	}
	return "", false
}

// Source returns the code that names the language of text written in tag:
// the code Target picks, provided it is the same language. Text in es-MX is
// es text; Galician text is not Spanish text, though a Galician reader may
// be served Spanish. A translator that cannot detect uses it to choose the
// pair to translate with.
func (l *Languages) Source(tag string) (string, bool) {
	code, ok := l.Target(tag)
	if !ok {
		return "", false
	}
	t, _ := parse(tag)
	for i, c := range l.codes {
		if c == code && sameBase(t, l.tags[i]) {
			return code, true
		}
	}
	return "", false
}

func sameBase(a, b language.Tag) bool {
	ba, _ := a.Base()
	bb, _ := b.Base()
	return ba == bb
}

// parse reads a well-formed tag in its fully canonical form on both sides of
// a match: legacy and macro-language codes become one code (nb and no are
// both no), which x/text's matcher otherwise mismatches (nb reads da when a
// list has both da and no).
func parse(s string) (language.Tag, bool) {
	if !ValidLanguageTag(s) {
		return language.Tag{}, false
	}
	t, err := language.All.Parse(s)
	return t, err == nil
}

// PickLanguage returns, among the languages a message is available in (the target
// codes its translations were stored under), the one that serves a reader
// whose preferred language is tag; false when none does. A message view uses
// it to choose the stored translation to show.
//
// It matches exactly as Target does, and the order of available does not
// matter: when the code the translator picked for tag is available, Pick
// returns that very code (es-AR reads es-MX out of es and es-MX); otherwise
// the closest available one (es-AR reads es when es-MX is not stored).
func PickLanguage(tag string, available ...string) (string, bool) {
	return NewLanguages(available...).Target(tag)
}
