package amazontranslate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/translate"
	"github.com/aws/aws-sdk-go-v2/service/translate/types"
	"github.com/aws/smithy-go"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/translation"
)

// Codes are the language codes Amazon Translate supports, as listed in
// "Supported languages and language codes" of the Amazon Translate Developer
// Guide (https://docs.aws.amazon.com/translate/latest/dg/what-is-languages.html).
// Regional variants are separate targets: es and es-MX, fr and fr-CA, pt
// (Brazil) and pt-PT, zh (Simplified) and zh-TW (Traditional), fa and fa-AF
// (Dari).
var Codes = []string{
	"af", "sq", "am", "ar", "hy", "az", "bn", "bs", "bg", "ca",
	"zh", "zh-TW", "hr", "cs", "da", "fa-AF", "nl", "en", "et", "fa",
	"tl", "fi", "fr", "fr-CA", "ka", "de", "el", "gu", "ht", "ha",
	"he", "hi", "hu", "is", "id", "ga", "it", "ja", "kn", "kk",
	"ko", "lv", "lt", "mk", "ms", "ml", "mt", "mr", "mn", "no",
	"ps", "pl", "pt", "pt-PT", "pa", "ro", "ru", "sr", "si", "sk",
	"sl", "so", "es", "es-MX", "sw", "sv", "ta", "te", "th", "tr",
	"uk", "ur", "uz", "vi", "cy",
}

// MaxTextBytes is the most UTF-8 bytes TranslateText accepts in one request.
const MaxTextBytes = 10000

var _ translation.Translator = (*Translator)(nil)

// Translator is a translation.Translator on Amazon Translate. It is safe for
// concurrent use.
type Translator struct {
	client *translate.Client
	langs  *translation.Languages
}

// New returns a Translator using client.
func New(client *translate.Client) *Translator {
	return &Translator{client: client, langs: translation.NewLanguages(Codes...)}
}

// Targets implements translation.Translator: every language in Codes,
// whatever the source, since the source is detected.
func (t *Translator) Targets(context.Context, string) (*translation.Languages, error) {
	return t.langs, nil
}

// Translate implements translation.Translator with TranslateText, source
// "auto". Result.SourceLanguage is the detected language; when it is target,
// the text comes back as it is, with no further call. source is used only
// when detection is not confident enough.
//
// Errors: translation.ErrUnsupported when Amazon Translate cannot translate
// the detected language into target; EUnavailable for throttling, service
// errors and transport failures that outlasted the SDK's retries;
// EInternal otherwise.
func (t *Translator) Translate(ctx context.Context, text, source, target string) (translation.Result, error) {
	pieces, seps := split(text, MaxTextBytes)
	var out strings.Builder
	from := "auto"
	for i, piece := range pieces {
		res, err := t.translate(ctx, piece, from, source, target)
		if err != nil {
			return translation.Result{}, err
		}
		if i == 0 {
			if res.SourceLanguage == target {
				return translation.Result{Text: text, SourceLanguage: res.SourceLanguage}, nil
			}
			// The rest is taken to be in the same language: detection once.
			from = res.SourceLanguage
		}
		out.WriteString(res.Text)
		if i < len(seps) {
			out.WriteString(seps[i])
		}
	}
	return translation.Result{Text: out.String(), SourceLanguage: from}, nil
}

// translate makes one TranslateText call from the code from ("auto" or a
// detected code); on a detection not confident enough, it calls once more
// from source's code, or else from the language Comprehend guessed.
func (t *Translator) translate(ctx context.Context, text, from, source, target string) (translation.Result, error) {
	out, err := t.client.TranslateText(ctx, &translate.TranslateTextInput{
		Text: aws.String(text), SourceLanguageCode: aws.String(from), TargetLanguageCode: aws.String(target),
	})
	var low *types.DetectedLanguageLowConfidenceException
	if errors.As(err, &low) {
		fallback, ok := t.langs.Source(source)
		if !ok {
			fallback = aws.ToString(low.DetectedLanguageCode)
		}
		if fallback == "" {
			return translation.Result{}, fmt.Errorf("amazontranslate: source language of the text unknown: %w", translation.ErrUnsupported)
		}
		if fallback == target {
			return translation.Result{Text: text, SourceLanguage: fallback}, nil
		}
		out, err = t.client.TranslateText(ctx, &translate.TranslateTextInput{
			Text: aws.String(text), SourceLanguageCode: aws.String(fallback), TargetLanguageCode: aws.String(target),
		})
	}
	if err != nil {
		var pair *types.UnsupportedLanguagePairException
		if errors.As(err, &pair) {
			if src := aws.ToString(pair.SourceLanguageCode); src == target {
				// Detected the target itself: nothing to translate.
				return translation.Result{Text: text, SourceLanguage: src}, nil
			}
			return translation.Result{}, fmt.Errorf("amazontranslate: %s into %s: %v: %w",
				aws.ToString(pair.SourceLanguageCode), target, err, translation.ErrUnsupported)
		}
		return translation.Result{}, fail("translate into "+target, err)
	}
	return translation.Result{Text: aws.ToString(out.TranslatedText), SourceLanguage: aws.ToString(out.SourceLanguageCode)}, nil
}

// unavailableCodes are errors that retrying later may fix; the SDK has
// already retried them.
var unavailableCodes = map[string]bool{
	"ThrottlingException":         true,
	"TooManyRequestsException":    true,
	"ServiceUnavailableException": true,
	"InternalServerException":     true,
	"LimitExceededException":      true,
	"RequestTimeout":              true,
	"RequestTimeoutException":     true,
}

func fail(op string, err error) error {
	wrapped := fmt.Errorf("amazontranslate: %s: %w", op, err)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return chat.Unavailable(wrapped)
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		if unavailableCodes[api.ErrorCode()] || api.ErrorFault() == smithy.FaultServer {
			return chat.Unavailable(wrapped)
		}
		return chat.Internal(wrapped)
	}
	// No answer at all (refused, reset, DNS) after the SDK's retries.
	return chat.Unavailable(wrapped)
}

// split cuts text into pieces of at most max bytes, each cut at the last
// line break in reach, else the last space, else the last whole character;
// seps[i] is the separator dropped between pieces[i] and pieces[i+1].
func split(text string, max int) (pieces, seps []string) {
	for len(text) > max {
		cut, sep := -1, ""
		window := text[:max+1] // a separator right at max still counts
		if i := strings.LastIndexByte(window, '\n'); i > 0 {
			cut, sep = i, "\n"
		} else if i := strings.LastIndexByte(window, ' '); i > 0 {
			cut, sep = i, " "
		} else {
			cut = max
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
		}
		pieces = append(pieces, text[:cut])
		seps = append(seps, sep)
		text = text[cut+len(sep):]
	}
	return append(pieces, text), seps
}
