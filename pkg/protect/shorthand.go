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
		for _, w := range strings.FieldsFunc(t, func(r rune) bool { return !unicode.IsLetter(r) }) {
			if !shorthandSet[strings.ToLower(w)] {
				return true
			}
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
