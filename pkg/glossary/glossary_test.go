package glossary_test

import (
	"testing"

	"github.com/chatbridge/chat/pkg/glossary"
)

// TestVersion: the same terms give the same version, whatever the order of
// a fixed term's translations; any change gives another; empty is "".
func TestVersion(t *testing.T) {
	a := glossary.WithVersion(glossary.Glossary{Keep: []string{"Go"}, Fixed: []glossary.Fixed{{Term: "x", Translations: map[string]string{"es": "1", "fr": "2"}}}})
	b := glossary.WithVersion(glossary.Glossary{Keep: []string{"Go"}, Fixed: []glossary.Fixed{{Term: "x", Translations: map[string]string{"fr": "2", "es": "1"}}}})
	c := glossary.WithVersion(glossary.Glossary{Keep: []string{"Go "}, Fixed: a.Fixed})
	if a.Version == "" || a.Version != b.Version || a.Version == c.Version {
		t.Fatalf("versions %q %q %q", a.Version, b.Version, c.Version)
	}
	if e := glossary.WithVersion(glossary.Glossary{}); e.Version != "" || e.Keep == nil || e.Fixed == nil {
		t.Fatalf("empty: %+v", e)
	}
}

// TestValidateEdges: 100 characters of 4-byte emoji is a term; 101 is not.
func TestValidateEdges(t *testing.T) {
	emoji := ""
	for range 100 {
		emoji += "🚀"
	}
	if err := glossary.Validate(glossary.Glossary{Keep: []string{emoji}}); err != nil {
		t.Fatalf("100 emoji: %v", err)
	}
	if err := glossary.Validate(glossary.Glossary{Keep: []string{emoji + "a"}}); err == nil {
		t.Fatal("101 characters: accepted")
	}
}
