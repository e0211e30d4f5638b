// Package apertium adapts Apertium's APY HTTP server (the self-hosted and
// local translator) to translation.Translator.
//
// APY names languages with ISO 639-3 codes, optionally with a variant after
// an underscore (eng, spa, eng_US, cat_valencia); the adapter speaks BCP 47
// (en, es, en-US, ca-valencia) to the rest of the service and converts with
// golang.org/x/text/language. APY cannot detect the source language, so the
// source is the one the job gives (the author's preferred language, or the
// workspace's default_language for a webhook post), and the targets are the
// pairs installed from that source, read from GET /listPairs and cached.
//
// internal/apyserver starts a local apertium-apy process for tests and
// `make run`; no function links it.
package apertium
