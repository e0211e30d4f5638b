package translation

import (
	"context"
	"errors"
)

// Translator translates text. Implementations are safe for concurrent use.
type Translator interface {
	// Targets returns the languages that text in source (a BCP 47 tag, the
	// author's or workspace's language; possibly "") can be translated into.
	// A translator that detects the source ignores source and returns all its
	// languages; one that cannot detect returns the targets of the pairs it
	// has from source, none when it has no pair from source. Errors: a
	// *chat.Error with EUnavailable when the translator cannot be reached.
	Targets(ctx context.Context, source string) (*Languages, error)

	// Translate returns text translated into target, one of the codes of
	// Targets(ctx, source). A translator that detects uses source only as a
	// fallback and reports what it detected in Result.SourceLanguage.
	// Errors: ErrUnsupported (wrapped) when it cannot translate this text
	// into target, which retrying will not change; a *chat.Error with
	// EUnavailable when retrying later may succeed; EInternal otherwise.
	Translate(ctx context.Context, text, source, target string) (Result, error)
}

// Result is one translation.
type Result struct {
	Text string
	// SourceLanguage is the source language the translator detected, in its
	// own code; empty when it does not detect.
	SourceLanguage string
}

// ErrUnsupported reports a source and target pair that the translator cannot
// translate. It is permanent: the Service leaves that target untranslated
// rather than failing the message.
var ErrUnsupported = errors.New("translation: unsupported language pair")

// None is the translator that supports nothing: every reader gets the content
// as it was posted, and no translator is ever called.
var None Translator = none{}

type none struct{}

func (none) Targets(context.Context, string) (*Languages, error) { return nil, nil }

func (none) Translate(context.Context, string, string, string) (Result, error) {
	return Result{}, ErrUnsupported
}
