package chat_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/chatbridge/chat/pkg/chat"
)

func TestLanguagesTarget(t *testing.T) {
	oneSpanish := chat.NewLanguages("en", "es", "fr", "de")
	amazonLike := chat.NewLanguages("en", "es", "es-MX", "fr", "fr-CA", "pt", "pt-PT", "zh", "zh-TW", "no", "tl", "he", "sr", "da")
	for _, tc := range []struct {
		name  string
		langs *chat.Languages
		tag   string
		want  string // "" means no target
	}{
		{"one Spanish: es", oneSpanish, "es", "es"},
		{"one Spanish: es-ES", oneSpanish, "es-ES", "es"},
		{"one Spanish: es-MX", oneSpanish, "es-MX", "es"},
		{"one Spanish: es-419", oneSpanish, "es-419", "es"},
		{"two Spanish: es-ES", amazonLike, "es-ES", "es"},
		{"two Spanish: es-MX", amazonLike, "es-MX", "es-MX"},
		{"two Spanish: es", amazonLike, "es", "es"},
		{"two Spanish: es-AR reads Latin American", amazonLike, "es-AR", "es-MX"},
		{"fr-CA", amazonLike, "fr-CA", "fr-CA"},
		{"fr-BE", amazonLike, "fr-BE", "fr"},
		{"pt-BR", amazonLike, "pt-BR", "pt"},
		{"pt-PT", amazonLike, "pt-PT", "pt-PT"},
		{"zh-CN", amazonLike, "zh-CN", "zh"},
		{"zh-HK", amazonLike, "zh-HK", "zh-TW"},
		{"zh-Hant", amazonLike, "zh-Hant", "zh-TW"},
		{"nb reads no", amazonLike, "nb-NO", "no"},
		{"fil reads tl", amazonLike, "fil", "tl"},
		{"iw reads he", amazonLike, "iw", "he"},
		{"sr-Latn reads sr (script only)", amazonLike, "sr-Latn", "sr"},
		{"case-insensitive", amazonLike, "EN-us", "en"},
		{"private use", amazonLike, "en-US-x-private", "en"},
		{"Traditional Chinese reads the one Chinese", chat.NewLanguages("en", "zh"), "zh-TW", "zh"},
		{"unsupported language", oneSpanish, "ja", ""},
		{"not a tag", oneSpanish, "en_US", ""},
		{"empty", oneSpanish, "", ""},
		{"nil languages", nil, "en", ""},
		{"empty languages", chat.NewLanguages(), "en", ""},
	} {
		got, ok := tc.langs.Target(tc.tag)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: Target(%q) = %q, %v; want %q", tc.name, tc.tag, got, ok, tc.want)
		}
	}
}

func TestNewLanguagesSkipsBadAndRepeatedCodes(t *testing.T) {
	got := chat.NewLanguages("en", "not_a_tag", "es", "en", "").Codes()
	if want := []string{"en", "es"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Codes() = %v, want %v", got, want)
	}
}

func TestPick(t *testing.T) {
	for _, tc := range []struct {
		tag       string
		available []string
		want      string
	}{
		{"es-MX", []string{"es", "fr"}, "es"},
		{"es-MX", []string{"es", "es-MX"}, "es-MX"},
		{"es-AR", []string{"es", "es-MX"}, "es-MX"},
		{"es-AR", []string{"es-MX", "es"}, "es-MX"},
		{"es-AR", []string{"es", "fr"}, "es"},
		{"nb", []string{"no"}, "no"},
		{"nb-NO", []string{"fr", "no", "da"}, "no"},
		{"fil", []string{"tl", "en"}, "tl"},
		{"zh-HK", []string{"zh", "zh-TW"}, "zh-TW"},
		{"zh-HK", []string{"zh"}, "zh"},
		{"pt-BR", []string{"pt", "pt-PT"}, "pt"},
		{"pt-AO", []string{"pt", "pt-PT"}, "pt-PT"},
		{"en-GB", []string{"en"}, "en"},
		{"fr-CA", []string{"fr"}, "fr"},
		// A tie breaks the same way whatever the order.
		{"fr-BE", []string{"fr-CA", "fr"}, "fr"},
		{"fr-BE", []string{"fr", "fr-CA"}, "fr"},
		{"de", []string{"es", "fr"}, ""},
		{"ja", []string{"es", "es-MX", "zh"}, ""},
		{"en", nil, ""},
	} {
		got, ok := chat.PickLanguage(tc.tag, tc.available...)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Pick(%q, %v) = %q, %v; want %q", tc.tag, tc.available, got, ok, tc.want)
		}
	}
}

// TestPickFindsTheTranslatorsTarget checks Pick against Target: whatever
// subset of a translator's codes a message was stored in, and in whatever
// order, a reader whose target is among them is shown that very target.
func TestPickFindsTheTranslatorsTarget(t *testing.T) {
	codes := []string{"en", "es", "es-MX", "fr", "fr-CA", "pt", "pt-PT", "zh", "zh-TW", "no", "tl", "he", "sr", "da", "fa-AF", "fa", "sv", "de"}
	full := chat.NewLanguages(codes...)
	readers := []string{"es", "es-ES", "es-AR", "es-419", "es-MX", "fr", "fr-BE", "fr-CH", "fr-CA", "br", "wo", "oc", "gl", "eu",
		"pt-BR", "pt-AO", "pt-PT", "zh-CN", "zh-HK", "zh-Hant", "zh-SG", "nb", "nn", "fil", "iw", "sr-Latn", "da", "fa-IR",
		"de-CH", "gsw", "en-GB", "en-IN"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tag := range readers {
		want, ok := full.Target(tag)
		if !ok {
			t.Fatalf("Target(%q) found nothing among %v: not a useful case", tag, codes)
		}
		for range 200 {
			available := []string{want}
			for _, c := range codes {
				if rng.IntN(3) == 0 {
					available = append(available, c)
				}
			}
			rng.Shuffle(len(available), func(i, j int) { available[i], available[j] = available[j], available[i] })
			if got, _ := chat.PickLanguage(tag, available...); got != want {
				t.Fatalf("Pick(%q, %v) = %q; want the translator's target %q", tag, available, got, want)
			}
		}
	}
}

func TestLanguagesSource(t *testing.T) {
	langs := chat.NewLanguages("en", "es")
	for _, tc := range []struct{ tag, want string }{
		{"es-MX", "es"}, {"en-GB", "en"}, {"EN", "en"},
		// A Galician reader may read Spanish; Galician text is not Spanish.
		{"gl", ""}, {"fr", ""}, {"", ""},
	} {
		got, ok := langs.Source(tc.tag)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Source(%q) = %q, %v; want %q", tc.tag, got, ok, tc.want)
		}
	}
	if got, ok := langs.Target("gl"); got != "es" || !ok {
		t.Errorf("Target(gl) = %q, %v; want es (CLDR's fallback for a reader)", got, ok)
	}
}
