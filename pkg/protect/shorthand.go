package protect

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// shorthand is chat shorthand that needs no translation, lower case.
var shorthand = []string{
	"ok", "okay", "k", "kk", "lol", "lmao", "rofl", "haha", "hahaha", "hehe", "xd",
	"lgtm", "sgtm", "ptal", "wfm", "ack", "nack", "thx", "tx", "ty", "tyvm", "np",
	"brb", "afk", "bbl", "gtg", "imo", "imho", "fyi", "btw", "tbh", "idk", "ikr",
	"nvm", "omg", "ofc", "pls", "plz", "ttyl", "gg", "wip", "eod", "tia", "hmm", "mhm",
}

var shorthandSet = func() map[string]bool {
	m := make(map[string]bool, len(shorthand))
	for _, w := range shorthand {
		m[w] = true
	}
	return m
}()

// Shorthand returns the chat shorthand that alone is no reason to
// translate a message, in lower case; matching ignores case. "+1" and
// "-1" need no entry: their digits are protected, and a sign is not a
// word. The list: ok, okay, k, kk, lol, lmao, rofl, haha, hahaha, hehe,
// xd, lgtm, sgtm, ptal, wfm, ack, nack, thx, tx, ty, tyvm, np, brb, afk,
// bbl, gtg, imo, imho, fyi, btw, tbh, idk, ikr, nvm, omg, ofc, pls, plz,
// ttyl, gg, wip, eod, tia, hmm, mhm.
func Shorthand() []string { return append([]string(nil), shorthand...) }

// Translatable reports whether the document has something to translate:
// a word outside its protected spans that is not chat shorthand.
func (d *Document) Translatable() bool {
	for _, t := range d.texts() {
		if hasWord(t) {
			return true
		}
	}
	return false
}

// Chars is the number of characters a translator receives: the text of
// the units outside their protected spans, in runes.
func (d *Document) Chars() int {
	n := 0
	for _, t := range d.texts() {
		n += utf8.RuneCountInString(t)
	}
	return n
}

// texts are the runs of text of the units outside their spans.
func (d *Document) texts() []string {
	var out []string
	for _, u := range d.units {
		at := u.Start
		for _, s := range u.Spans {
			out = append(out, d.src[at:s.Start])
			at = s.End
		}
		out = append(out, d.src[at:u.End])
	}
	return out
}

// UnitText is the text of unit k outside its protected spans, each span a
// space: what a language detector may judge.
func (d *Document) UnitText(k int) string {
	u := d.units[k]
	var b strings.Builder
	at := u.Start
	for _, s := range u.Spans {
		b.WriteString(d.src[at:s.Start])
		b.WriteByte(' ')
		at = s.End
	}
	b.WriteString(d.src[at:u.End])
	return b.String()
}

// UnitTranslatable reports whether unit k has a word outside its spans
// that is not chat shorthand.
func (d *Document) UnitTranslatable(k int) bool {
	return hasWord(d.UnitText(k))
}

func hasWord(t string) bool {
	for _, w := range strings.FieldsFunc(t, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if !shorthandSet[strings.ToLower(w)] {
			return true
		}
	}
	return false
}
