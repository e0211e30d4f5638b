package chat

import "testing"

func TestValidLanguageTag(t *testing.T) {
	for _, tc := range []struct {
		tag  string
		want bool
	}{
		{"en", true}, {"es-ES", true}, {"zh-Hant-TW", true}, {"sr-Latn-RS", true},
		{"de-CH-1996", true}, {"en-US-x-private", true}, {"qaa", true}, {"EN-us", true},
		{"", false}, {"en_US", false}, {"en-", false}, {"-en", false}, {"e", false},
		{"en--US", false}, {"en US", false}, {"toolonglanguagesubtag", false},
		{"en-US-abcdefghijklmnopqrstuvwxyzabc", false}, {"1234", false}, {"en-ÜS", false},
	} {
		if got := ValidLanguageTag(tc.tag); got != tc.want {
			t.Errorf("ValidLanguageTag(%q) = %v, want %v", tc.tag, got, tc.want)
		}
	}
}
