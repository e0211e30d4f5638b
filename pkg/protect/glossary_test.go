package protect_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/protect"
)

// TestFixedTermsAreRendered: a glossary term with a fixed rendering is a
// span, sent as its rendering inside Amazon Translate's do-not-translate
// element and never as a word, and every result has the rendering in its
// place, whatever the translator did around it.
func TestFixedTermsAreRendered(t *testing.T) {
	names := protect.Names{
		Keep:  []string{"Frank Will", "ChatBridge"},
		Fixed: map[string]string{"on-call": "de guardia", "Will": "Voluntad", "C++": "C más más", "a.*b": "A-B"},
	}
	for _, tc := range []struct {
		in, translated, want string
	}{
		{"Ask the on-call engineer", `Pregunta al ingeniero <b id="p1"/>`, "Pregunta al ingeniero de guardia"},
		// The longest name wins where two overlap: Frank Will is kept whole.
		{"Frank Will is on-call", `<b id="p1"/> está <b id="p2"/>`, "Frank Will está de guardia"},
		{"Will it work in C++?", `¿<b id="p1"/> funciona en <b id="p2"/>?`, "¿Voluntad funciona en C más más?"},
		// A term is text, not a pattern: "a.*b" matches only itself.
		{"axxb and a.*b differ", `axxb y <b id="p1"/> difieren`, "axxb y A-B difieren"},
		// A whole word only: "Willow" is not "Will".
		{"Willow trees", `Sauces`, "Sauces"},
	} {
		d := protect.Parse(tc.in, names)
		got, err := d.RestorePlaceholders([]string{tc.translated})
		if err != nil || got != tc.want {
			t.Errorf("%q from %q: got %q, %v; want %q (forms %q)", tc.in, tc.translated, got, err, tc.want, d.Placeholders())
		}
		for _, u := range d.Placeholders() {
			for _, term := range []string{"on-call", "C++", "a.*b"} {
				if strings.Contains(u, term) {
					t.Errorf("%q: the fixed term %q was sent as text: %q", tc.in, term, u)
				}
			}
		}
	}
	d := protect.Parse("Ask the on-call engineer", names)
	if got := d.HTML(); !reflect.DeepEqual(got, []string{`Ask the <span translate="no" id="p1">de guardia</span> engineer`}) {
		t.Errorf("HTML form %q, want the rendering inside the do-not-translate element", got)
	}
	// The identity round trip renders the term too.
	if got, err := d.RestoreHTML(d.HTML()); err != nil || got != "Ask the de guardia engineer" {
		t.Errorf("identity: %q, %v", got, err)
	}
}

// TestSentencesAreUnits: a line is cut at its sentence ends, so that each
// sentence is detected, remembered and translated alone; a full stop in a
// version, a path or an abbreviation before a lower-case word cuts
// nothing, and the white space between sentences is kept as it was.
func TestSentencesAreUnits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Deploy started.  Build 4812 passed! Is it ok? yes it is", []string{"Deploy started.", `Build <b id="p1"/> passed!`, "Is it ok? yes it is"}},
		{"v1.2.3 is out. Update /etc/app.conf now.", []string{`<b id="p1"/> is out.`, `Update <b id="p1"/> now.`}},
		{"e.g. this one. ¿Y tú? «Sí.» Vale", []string{`<b id="p1"/>. this one.`, "¿Y tú?", "«Sí.»", "Vale"}},
		{"See @ana. She knows", []string{`See <b id="p1"/>.`, "She knows"}},
		{"Wait... what?! OK", []string{"Wait... what?!", "OK"}},
	} {
		d := protect.Parse(tc.in, protect.Names{})
		if got := d.Placeholders(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: units %q, want %q", tc.in, got, tc.want)
		}
		if got, err := d.RestorePlaceholders(d.Placeholders()); err != nil || got != tc.in {
			t.Errorf("%q: identity round trip %q, %v", tc.in, got, err)
		}
	}
}

// TestUnitTextAndTranslatable: what a detector judges is a unit's words,
// each span a space; a unit of shorthand alone is not translated.
func TestUnitTextAndTranslatable(t *testing.T) {
	d := protect.Parse("LGTM :+1:\n\nthe build at `ci` is green", protect.Names{})
	if n := len(d.Units()); n != 2 {
		t.Fatalf("%d units, want 2", n)
	}
	if d.UnitTranslatable(0) || !d.UnitTranslatable(1) {
		t.Errorf("translatable: %v %v, want false true", d.UnitTranslatable(0), d.UnitTranslatable(1))
	}
	if got := d.UnitText(1); got != "the build at   is green" {
		t.Errorf("UnitText %q", got)
	}
	if !d.RestoresUnit(1, `el build en <b id="p1"/> es verde`) || d.RestoresUnit(1, "el build es verde") {
		t.Error("RestoresUnit: wrong")
	}
}
