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

// Form is how a translator receives a message's protected spans (package
// protect): each translation unit is sent as text with its spans marked in
// this form, and restored from the answer.
type Form int

const (
	// Placeholders marks each span with an empty element <b id="pN"/>,
	// which Apertium's HTML deformatter carries through in place. The text
	// is HTML-escaped.
	Placeholders Form = iota
	// HTML marks each span <span translate="no" id="pN">…</span>, Amazon
	// Translate's documented do-not-translate form (TranslateText reads
	// HTML in its Text).
	// The text is HTML-escaped.
	HTML
)

// Former is a Translator that names the Form it honours. A Translator that
// is not a Former receives Placeholders.
type Former interface {
	Form() Form
}

// Detector guesses the language of a text locally, with no network call.
type Detector interface {
	// Detect returns the language of text (a BCP 47 tag, one of
	// candidates when candidates is not empty) and whether it is confident
	// of it. text is prose: protected spans (code, links, names) already
	// removed. A text too short to judge returns false.
	Detect(text string, candidates []string) (tag string, confident bool)
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
