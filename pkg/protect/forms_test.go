package protect_test

import "github.com/chatbridge/chat/pkg/protect"

// form is one of a document's two translator forms: its units, and the
// restore that reads them back.
type form struct {
	units   []string
	restore func([]string) (string, error)
}

// forms are d's placeholder (Apertium) and HTML (Amazon Translate) forms,
// by name.
func forms(d *protect.Document) map[string]form {
	return map[string]form{
		"placeholders": {d.Placeholders(), d.RestorePlaceholders},
		"html":         {d.HTML(), d.RestoreHTML},
	}
}
