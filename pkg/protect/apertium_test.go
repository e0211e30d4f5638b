package protect_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chatbridge/chat/internal/apyserver"
	"github.com/chatbridge/chat/pkg/apertium"
	"github.com/chatbridge/chat/pkg/protect"
)

// TestPlaceholdersSurviveApertium runs the placeholder form through a real
// apertium-apy, en→es, by the service's own client: every span comes back
// in place, the words are translated, nothing of Apertium's leaks.
func TestPlaceholdersSurviveApertium(t *testing.T) {
	if missing := apyserver.Missing(apyserver.DefaultModesDir, "eng-spa"); missing != nil {
		t.Skipf("SKIPPED, NOT PASSED: no real apertium-apy with eng-spa: %v. `make test` installs it via scripts/ensure-test-tools.", missing)
	}
	ctx := context.Background()
	apy, err := apyserver.Start(ctx, 0, apyserver.DefaultModesDir)
	if err != nil {
		t.Fatalf("starting apertium-apy: %v", err)
	}
	defer apy.Stop()
	client, err := apertium.New(apy.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in    string
		words []string // Spanish the translation has
	}{
		{"Run `make build` before the big meeting", []string{"reunión"}},
		{"**Important:** the house of Frank Will is big", []string{"**Importante:**", "casa", "Frank Will"}},
		{"Check /var/log/nginx/error.log and $HOME, @here #build-alerts :white_check_mark:", []string{"/var/log/nginx/error.log", "@here #build-alerts :white_check_mark:"}},
		{"- read [the red book](https://example.invalid/book) today\n- the cat is black 🐈", []string{"](https://example.invalid/book)", "🐈", "gato"}},
		{"| the house | the car |\n|---|---|\n| `x` is white | a < b & c |", []string{"casa", "coche", "`x`", "< b & c"}},
		{"Tell Bill that v1.2.3 uses 3.5GB at 10.0.0.1:8080", []string{"Bill", "v1.2.3", "3.5GB", "10.0.0.1:8080"}},
		{"The unknownword xyzzyq is *very* good", []string{"xyzzyq", "*muy*"}},
	} {
		d := protect.Parse(tc.in, workspace)
		units := d.Placeholders()
		translated := make([]string, len(units))
		for i, u := range units {
			res, err := client.Translate(ctx, u, "en", "es")
			if err != nil {
				t.Fatalf("Translate(%q): %v", u, err)
			}
			translated[i] = res.Text
		}
		got, err := d.RestorePlaceholders(translated)
		if err != nil {
			t.Errorf("restoring %q from %q: %v", tc.in, translated, err)
			continue
		}
		if got == tc.in {
			t.Errorf("%q: nothing was translated", tc.in)
		}
		noLeak(t, tc.in, got)
		for _, w := range tc.words {
			if !strings.Contains(got, w) {
				t.Errorf("%q: translation %q has no %q", tc.in, got, w)
			}
		}
		t.Logf("%q\n→ %q", tc.in, got)
	}
}
