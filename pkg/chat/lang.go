package chat

import (
	"errors"
	"regexp"
	"sync"

	"golang.org/x/text/language"
)

// MaxLanguageTagLen is the contract's bound on a preferred language tag.
const MaxLanguageTagLen = 35

// tagChars is the form of a tag: alphanumeric subtags joined by single hyphens.
// Compiled on first use, not at package init: every function links this
// package, few validate a tag, and each cold start pays for its
// initialisers (docs/performance.md).
var tagChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$`) })

// ValidLanguageTag reports whether s is a well-formed BCP 47 tag of at most
// 35 characters. Well-formed is the contract's word: a tag whose subtags
// parse but are not registered (ValueError) still passes; a syntax error,
// an underscore or an empty subtag does not.
func ValidLanguageTag(s string) bool {
	if s == "" || len(s) > MaxLanguageTagLen || !tagChars().MatchString(s) {
		return false
	}
	_, err := language.Parse(s)
	if err == nil {
		return true
	}
	var ve interface{ Subtag() string }
	return errors.As(err, &ve)
}
