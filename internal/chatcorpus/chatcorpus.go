// Package chatcorpus is a corpus of realistic chat messages for the
// translation tests: code, traces, links, mentions, emoji, markdown, the
// demo workspace's names, numbers, paths, identifiers, mixed languages,
// shorthand, bots' repeated lines and prose, each with what a translation
// must keep byte-identical. The demo workspace (fixtures/demo.json) is the
// setting: members Ana (es-ES), Ben (en-US) and Chloé (fr-FR), channels
// general and support, bots CI Bot and Deploy Bot.
package chatcorpus

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// Message is one corpus message.
type Message struct {
	ID    string `json:"id"`
	Class string `json:"class"`
	// Author is "ben" (prefers en-US), "ana" (prefers es-ES) or "bot" (the
	// workspace's default language, en).
	Author string `json:"author"`
	// Language is what the text is: "en", "es", "mixed" (a sentence of
	// each), or "none" (nothing to translate).
	Language string `json:"language"`
	Content  string `json:"content"`
	// Keep are substrings every reader's view has, byte-identical, at
	// least as often as Content.
	Keep []string `json:"keep"`
	// KeepIn are substrings kept only in the view of a reader of that
	// language ("es", "en"): the sentence already in it.
	KeepIn map[string][]string `json:"keep_in,omitempty"`
	Note   string              `json:"note,omitempty"`
}

//go:embed corpus.json
var corpusJSON []byte

// Messages returns the corpus in its order.
func Messages() []Message {
	var out []Message
	if err := json.Unmarshal(corpusJSON, &out); err != nil {
		panic(fmt.Sprintf("chatcorpus: corpus.json: %v", err))
	}
	return out
}

// Classes returns the corpus's classes in a fixed order.
func Classes() []string {
	return []string{"code", "trace", "link", "mention", "emoji", "markdown", "names", "numbers", "paths",
		"identifiers", "mixed", "shorthand", "bot", "prose"}
}
