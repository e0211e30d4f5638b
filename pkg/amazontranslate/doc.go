// Package amazontranslate adapts Amazon Translate (TranslateText, through the
// aws-sdk-go-v2 client) to translation.Translator.
//
// It detects the source language (SourceLanguageCode "auto", which has
// Amazon Comprehend detect it) and reports what it detected, so a message is
// never translated into the language it is written in whatever the job says.
// Texts longer than TranslateText accepts are sent in pieces, cut between
// lines, sentences or words.
//
// The adapter receives its *translate.Client; it never builds one. Errors are
// the service's codes: throttling, 5xx and transport failures (after the
// SDK's own retries) are EUnavailable, an unsupported pair is
// translation.ErrUnsupported, anything else EInternal.
package amazontranslate
