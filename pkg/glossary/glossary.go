// Package glossary is a workspace's glossary (its terms that are never
// translated, and its terms with a fixed translation per target language):
// the value, its limits and its validation. The translation capability
// applies it; the workspace API reads and replaces it.
//
// The package imports nothing from AWS.
package glossary

// Glossary is a workspace's glossary. The zero value is the empty glossary.
type Glossary struct {
	// Keep are terms that are never translated.
	Keep []string `json:"keep"`
	// Fixed are terms rendered as given for a target language.
	Fixed []Fixed `json:"fixed"`
	// Version identifies the glossary's content: it changes whenever Keep or
	// Fixed change, and is "" for the empty glossary. Translations made
	// with one version are never reused with another.
	Version string `json:"-"`
}

// Fixed is a term with a fixed translation per target language.
type Fixed struct {
	Term string `json:"term"`
	// Translations maps a target language (a BCP 47 tag or its primary
	// subtag) to the term's rendering in it.
	Translations map[string]string `json:"translations"`
}
