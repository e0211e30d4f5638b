package protect_test

import (
	"testing"

	"github.com/chatbridge/chat/pkg/protect"
)

// FuzzRoundTrip: whatever the content, the identity translation of either
// form restores it exactly, and a translator that changes every letter
// restores without error.
func FuzzRoundTrip(f *testing.F) {
	for _, in := range corpus() {
		f.Add(in)
	}
	for _, tc := range hostile() {
		if len(tc.in) < 300 {
			f.Add(tc.in)
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		d := protect.Parse(in, workspace)
		for name, form := range forms(d) {
			got, err := form.restore(form.units)
			if err != nil || got != in {
				t.Fatalf("%s: identity round trip of %q: got %q, %v", name, in, got, err)
			}
			if _, err := form.restore(letters(form.units)); err != nil {
				t.Fatalf("%s: restoring %q translated: %v", name, in, err)
			}
		}
	})
}
