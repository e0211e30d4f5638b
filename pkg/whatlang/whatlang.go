// Package whatlang adapts github.com/abadojack/whatlanggo, a trigram
// language detector with its profiles compiled in, to translation.Detector:
// the service finds a message's language itself, with no network call, in
// AWS and locally alike.
//
// whatlanggo was chosen for its size and start: it adds about 1 MiB to the
// translation function and reads nothing at start-up, against lingua-go's
// hundreds of megabytes of models. Its weakness is short text; the
// Detector answers only for texts with MinLetters letters or more, among
// the candidates the caller names (the languages in play in a channel),
// and only at MinConfidence. docs/translation.md has the measurements.
package whatlang

import (
	"strings"
	"sync"
	"unicode"

	"github.com/abadojack/whatlanggo"
	"golang.org/x/text/language"

	"github.com/chatbridge/chat/pkg/translation"
)

// Defaults of a Detector, chosen on testdata/short.tsv (TestAccuracyReport).
const (
	DefaultMinLetters    = 12
	DefaultMinConfidence = 0.5
)

var _ translation.Detector = Detector{}

// Detector is a translation.Detector on whatlanggo. The zero value uses
// the defaults. It is safe for concurrent use.
type Detector struct {
	// MinLetters is the fewest letters a text needs to be judged.
	MinLetters int
	// MinConfidence is the least whatlanggo confidence (0 to 1) of an
	// answer.
	MinConfidence float64
}

// byBase maps an ISO 639-1 code to whatlanggo's language, built on first
// use (whatlanggo builds a map per code lookup: about a millisecond).
var byBase = sync.OnceValue(func() map[string]whatlanggo.Lang {
	m := map[string]whatlanggo.Lang{}
	for l := whatlanggo.Lang(0); l < 200; l++ {
		if code := l.Iso6391(); code != "" {
			m[code] = l
		}
	}
	return m
})

// Detect implements translation.Detector. candidates restrict the answer
// (a candidate whatlanggo does not know is ignored); with fewer than two
// known candidates there is nothing to choose and the answer is not
// confident; with none given, every language whatlanggo knows competes.
func (d Detector) Detect(text string, candidates []string) (string, bool) {
	minLetters, minConfidence := d.MinLetters, d.MinConfidence
	if minLetters <= 0 {
		minLetters = DefaultMinLetters
	}
	if minConfidence <= 0 {
		minConfidence = DefaultMinConfidence
	}
	if letters(text) < minLetters {
		return "", false
	}
	var opts whatlanggo.Options
	if len(candidates) > 0 {
		opts.Whitelist = map[whatlanggo.Lang]bool{}
		for _, c := range candidates {
			tag, err := language.Parse(c)
			if err != nil {
				continue
			}
			base, _ := tag.Base()
			if l, ok := byBase()[base.String()]; ok {
				opts.Whitelist[l] = true
			}
		}
		if len(opts.Whitelist) < 2 {
			return "", false
		}
	}
	info := whatlanggo.DetectWithOptions(text, opts)
	code := info.Lang.Iso6391()
	if code == "" || info.Confidence < minConfidence {
		return "", false
	}
	// Trigrams mistake short English for French ("let me know when you are
	// back"): the words that hold a sentence together outvote them.
	if best, n := functionWordsVote(text, opts.Whitelist); best != "" && best != code && n >= 2 && n > functionWordHits(text, code) {
		return best, true
	}
	return code, true
}

// function words of the languages chat mixes most: short, frequent, and
// rare as words of the others.
var function = map[string][]string{
	"en": {"the", "and", "you", "is", "are", "to", "of", "it", "we", "our", "my", "me", "what", "when", "who", "this", "that", "with", "for", "say", "can", "will", "be", "have", "not", "on", "at", "in", "please", "thanks"},
	"es": {"el", "la", "los", "las", "de", "que", "y", "en", "un", "una", "es", "por", "con", "para", "no", "se", "del", "al", "lo", "mi", "su", "está", "gracias", "pero", "muy", "hoy", "mañana", "dónde", "qué", "quién"},
	"fr": {"le", "la", "les", "de", "des", "du", "et", "est", "un", "une", "pour", "pas", "que", "qui", "dans", "sur", "avec", "je", "tu", "nous", "vous", "il", "elle", "ce", "merci", "bonjour", "mon", "ma", "au", "aux"},
	"de": {"der", "die", "das", "und", "ist", "nicht", "ein", "eine", "ich", "du", "wir", "sie", "mit", "für", "auf", "den", "dem", "zu", "von", "es", "danke", "bitte", "heute", "schon", "noch", "kann", "hat", "sich", "auch", "wieder"},
	"pt": {"o", "a", "os", "as", "de", "que", "e", "do", "da", "em", "um", "uma", "para", "com", "não", "por", "mais", "você", "obrigado", "obrigada", "hoje", "meu", "minha", "está", "foi", "ao", "dos", "das", "isso", "vai"},
	"it": {"il", "lo", "la", "gli", "le", "di", "che", "e", "è", "un", "una", "per", "con", "non", "del", "della", "da", "in", "mio", "mia", "grazie", "oggi", "sono", "alla", "ho", "ha", "questo", "anche", "come", "ci"},
}

var functionSets = func() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for lang, words := range function {
		out[lang] = map[string]bool{}
		for _, w := range words {
			out[lang][w] = true
		}
	}
	return out
}()

func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
}

func functionWordHits(text, lang string) int {
	set := functionSets[lang]
	n := 0
	for _, w := range words(text) {
		if set[w] {
			n++
		}
	}
	return n
}

// functionWordsVote returns the candidate (of whitelist, or any known)
// with the most function words in text, when one has strictly the most.
func functionWordsVote(text string, whitelist map[whatlanggo.Lang]bool) (string, int) {
	best, bestN, tie := "", 0, false
	for lang := range function {
		if l, ok := byBase()[lang]; len(whitelist) > 0 && (!ok || !whitelist[l]) {
			continue
		}
		n := functionWordHits(text, lang)
		switch {
		case n > bestN:
			best, bestN, tie = lang, n, false
		case n == bestN:
			tie = true
		}
	}
	if tie {
		return "", 0
	}
	return best, bestN
}

func letters(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}
