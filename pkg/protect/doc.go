// Package protect is text with protected spans: it splits a chat message
// into what a translator may change and what it must never see, and puts a
// translation back together with everything protected byte-identical.
//
// Parse finds structure with a CommonMark parser (goldmark, with the GFM
// tables, strikethrough, autolinks and task lists), not with patterns over
// the raw text. Every byte of the content is one of three things:
//
//   - structure, between translation units: list markers and indentation,
//     "> ", table pipes and alignment rows, heading #s, blank lines, whole
//     fenced and indented code blocks and HTML blocks, link reference
//     definitions. It is copied, never sent.
//   - a translation unit: one line of a paragraph, a heading, a list item's
//     line, a quote's line, a table cell. No word can move across a line,
//     list item or cell, because each unit is translated alone.
//   - inside a unit, a protected span: every byte that is not the text of
//     a text node (code spans, emphasis and strikethrough markers, link
//     brackets and destinations and titles, autolinks, raw HTML, escapes),
//     and, inside text, what scanners on the node's own text find: URLs,
//     e-mail addresses, @mentions, #channels, emoji sequences and
//     :shortcodes:, paths, environment variables and placeholders,
//     identifiers that are not words (snake_case, camelCase, dotted.names,
//     --flags), anything with a digit (numbers with units, versions, hex,
//     hashes, IP addresses and ports), the characters a translator uses as
//     marks (* # @) and markdown's own punctuation, controls and invalid
//     UTF-8, and the workspace's Names as whole words. Protected runs
//     separated only by spaces or punctuation form one span, so that a
//     translator sees few placeholders.
//
// A unit without a letter outside its spans is structure too: there is
// nothing in it to translate. Translatable reports whether anything but
// chat shorthand (Shorthand) is left, and Chars how many characters a
// translator would receive.
//
// Two forms carry a unit to a translator, each with its inverse:
// Placeholders and RestorePlaceholders for Apertium (each span an empty
// element <b id="pN"/>, which APY's HTML deformatter carries through as
// formatting, in place, without breaking the sentence), HTML and RestoreHTML
// for Amazon Translate (each span <span translate="no" id="pN">, its
// documented do-not-translate form). Text is HTML-escaped in both. Restoring
// finds the placeholders however the translator reordered, duplicated,
// recased or respaced them, restores the original's whitespace around each
// span, drops every other tag and every translator's mark, and returns an
// error wrapping ErrNotRestored when a span did not come back: the caller
// then shows the original. Nothing of a translator's markup ever reaches the
// result.
//
// Cost: Parse is linear in the content's length for chat as it is written
// (BenchmarkParse). One shape is not: a single line of thousands of
// unclosed link openings ("[a](" repeated) makes goldmark's link
// destination parser quadratic, about a second for 40,000 characters on
// one core; the content limit bounds it.
//
// The package imports no AWS SDK and calls no translator; a fixed
// translation of a glossary term can later be one more kind of span whose
// restored bytes depend on the target language.
package protect
