package messages

import (
	"strings"
	"unicode/utf8"
)

// MaxContentLen is the contract's bound on a message, in characters, for
// every way a message enters a channel (a webhook, a guest).
const MaxContentLen = 40000

// CheckContent returns the contract's complaint about a message's content,
// or "" when it is acceptable: not blank after trimming, at most
// MaxContentLen characters. The content is stored as sent, untrimmed:
// leading indentation and trailing newlines can matter (code, lists).
func CheckContent(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "The content field is required."
	case !utf8.ValidString(s):
		return "The content field must be a valid UTF-8 string."
	case utf8.RuneCountInString(s) > MaxContentLen:
		return "The content field must not be greater than 40000 characters."
	}
	return ""
}
