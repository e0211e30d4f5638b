package amazontranslate

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
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
	var out strings.Builder
	from := "auto"
	sent := false
	for _, c := range split(text, MaxTextBytes) {
		if !c.send {
			out.WriteString(c.text) // protected elements alone: nothing to translate
			continue
		}
		// The white space around a piece is kept here: an answer may come
		// back trimmed, and the pieces would run together.
		core := strings.TrimSpace(c.text)
		lead := c.text[:strings.Index(c.text, core)]
		trail := c.text[len(lead)+len(core):]
		res, err := t.translate(ctx, core, from, source, target)
		if err != nil {
			return translation.Result{}, err
		}
		res.Text = lead + strings.TrimSpace(res.Text) + trail
		if !sent {
			sent = true
			if res.SourceLanguage == target {
				return translation.Result{Text: text, SourceLanguage: res.SourceLanguage}, nil
			}
			// The rest is taken to be in the same language: detection once.
			from = res.SourceLanguage
		}
		out.WriteString(res.Text)
	}
	if !sent {
		return translation.Result{Text: text}, nil
	}
	return translation.Result{Text: out.String(), SourceLanguage: from}, nil
}

// Form implements translation.Former: protected spans travel as elements
// with translate="no", Amazon Translate's documented do-not-translate form
// (TranslateText takes HTML in Text).
func (t *Translator) Form() translation.Form { return translation.HTML }

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

// chunk is a piece of a text cut for TranslateText: send is false for a
// piece that holds nothing to translate (only tags and translate="no"
// elements, or white space), which is kept as it is.
type chunk struct {
	text string
	send bool
}

// noTranslate finds the opening tag of an element not to translate.
var noTranslate = regexp.MustCompile(`(?i)^<\s*([a-z][a-z0-9]*)\b[^>]*\btranslate\s*=\s*["']?no\b[^>]*>$`)

// split cuts text (HTML: text, tags, entities and translate="no"
// elements) into pieces of at most max bytes, concatenated back to text.
// It cuts between words, never inside a tag, an entity or a translate="no"
// element; an element too large for a piece (or large enough to crowd one)
// is a piece of its own, never sent; a word longer than a piece is cut at
// a character boundary outside any entity.
func split(text string, max int) []chunk {
	var out []chunk
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, chunk{text: cur.String(), send: hasText(cur.String())})
			cur.Reset()
		}
	}
	add := func(tok string) {
		if cur.Len()+len(tok) > max {
			flush()
		}
		for len(tok) > max {
			cut := max
			for cut > 0 && !utf8.RuneStart(tok[cut]) {
				cut--
			}
			if amp := strings.LastIndexByte(tok[:cut], '&'); amp >= 0 && !strings.Contains(tok[amp:cut], ";") && amp > 0 {
				cut = amp
			}
			out = append(out, chunk{text: tok[:cut], send: hasText(tok[:cut])})
			tok = tok[cut:]
		}
		cur.WriteString(tok)
	}
	for i := 0; i < len(text); {
		if text[i] == '<' {
			if j := strings.IndexByte(text[i:], '>'); j > 0 {
				tag := text[i : i+j+1]
				if m := noTranslate.FindStringSubmatch(tag); m != nil && !strings.HasSuffix(tag, "/>") {
					if end := closeIndex(text[i+j+1:], m[1]); end >= 0 {
						el := text[i : i+j+1+end]
						if len(el) > max/4 {
							flush()
							out = append(out, chunk{text: el})
						} else {
							add(el)
						}
						i += len(el)
						continue
					}
				}
				add(tag)
				i += len(tag)
				continue
			}
		}
		// A word and the white space after it, up to the next tag.
		j := i
		for j < len(text) && text[j] != '<' && text[j] != ' ' && text[j] != '\n' {
			j++
		}
		for j < len(text) && (text[j] == ' ' || text[j] == '\n') {
			j++
		}
		if j == i {
			j++ // a '<' that opens no tag
		}
		add(text[i:j])
		i = j
	}
	flush()
	return out
}

// closeIndex returns the end of the first closing tag of element name in
// rest (</name>, any case, spaces before >), -1 when there is none.
func closeIndex(rest, name string) int {
	lower := strings.ToLower(rest)
	at := 0
	for {
		k := strings.Index(lower[at:], "</"+strings.ToLower(name))
		if k < 0 {
			return -1
		}
		k += at + 2 + len(name)
		end := k
		for end < len(rest) && rest[end] == ' ' {
			end++
		}
		if end < len(rest) && rest[end] == '>' {
			return end + 1
		}
		at = k
	}
}

// hasText reports whether piece has something to translate: a letter
// outside its tags and translate="no" elements.
func hasText(piece string) bool {
	for i := 0; i < len(piece); {
		if piece[i] == '<' {
			if j := strings.IndexByte(piece[i:], '>'); j > 0 {
				tag := piece[i : i+j+1]
				if m := noTranslate.FindStringSubmatch(tag); m != nil {
					if end := closeIndex(piece[i+j+1:], m[1]); end >= 0 {
						i += j + 1 + end
						continue
					}
				}
				i += j + 1
				continue
			}
		}
		r, w := utf8.DecodeRuneInString(piece[i:])
		if unicode.IsLetter(r) {
			return true
		}
		i += w
	}
	return false
}
