package reactions

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/chat"
)

func TestParseAccepts(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"pictograph", "👍", "👍"},
		{"pictograph with a redundant VS16", "👍\uFE0F", "👍"},
		{"encoded", url.PathEscape("👍"), "👍"},
		{"shortcode", ":+1:", "👍"},
		{"shortcode alias", ":thumbsup:", "👍"},
		{"shortcode upper case", ":TADA:", "🎉"},
		{"encoded shortcode", url.PathEscape(":-1:"), "👎"},
		{"text-default heart bare", "\u2764", "\u2764\uFE0F"},
		{"text-default heart qualified", "\u2764\uFE0F", "\u2764\uFE0F"},
		{"heart shortcode is the same", ":heart:", "\u2764\uFE0F"},
		{"skin tone", "👍🏽", "👍🏽"},
		{"skin tone after VS16", "👋\uFE0F🏿", "👋🏿"},
		{"ZWJ technologist", "👩\u200D💻", "👩\u200D💻"},
		{"ZWJ family", "👨\u200D👩\u200D👧", "👨\u200D👩\u200D👧"},
		{"ZWJ toned", "👩🏽\u200D💻", "👩🏽\u200D💻"},
		{"rainbow flag qualified", "🏳\uFE0F\u200D🌈", "🏳\uFE0F\u200D🌈"},
		{"rainbow flag unqualified", "🏳\u200D🌈", "🏳\uFE0F\u200D🌈"},
		{"regional pair", "🇫🇷", "🇫🇷"},
		{"encoded flag", "%F0%9F%87%AB%F0%9F%87%B7", "🇫🇷"},
		{"keycap qualified", "#\uFE0F\u20E3", "#\uFE0F\u20E3"},
		{"keycap unqualified", "7\u20E3", "7\uFE0F\u20E3"},
		{"keycap star", "*\u20E3", "*\uFE0F\u20E3"},
		{"tag sequence England", "🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F", "🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"},
		{"copyright", "©", "©\uFE0F"},
		{"emoji-presentation BMP", "⭐\uFE0F", "⭐"},
		{"text-default BMP", "☀", "☀\uFE0F"},
		{"newest block", "🫠", "🫠"},
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("%s: Parse(%q) = %q, %v; want %q", tc.name, tc.in, got, err, tc.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"letters", "a"},
		{"word", "heart"},
		{"digit alone", "1"},
		{"hash alone", "#"},
		{"digit with VS16 only", "1\uFE0F"},
		{"text before", "a👍"},
		{"text after", "👍a"},
		{"space around", " 👍"},
		{"two emoji", "👍👍"},
		{"two emoji encoded", url.PathEscape("👍🎉")},
		{"lone modifier", "🏽"},
		{"two modifiers", "👍🏽🏽"},
		{"lone ZWJ", "\u200D"},
		{"leading ZWJ", "\u200D👍"},
		{"trailing ZWJ", "👍\u200D"},
		{"double ZWJ", "👩\u200D\u200D💻"},
		{"lone VS16", "\uFE0F"},
		{"VS16 after ZWJ", "👩\u200D\uFE0F💻"},
		{"ZWJ to a letter", "👩\u200Da"},
		{"one regional indicator", "🇫"},
		{"three regional indicators", "🇫🇷🇫"},
		{"keycap mark alone", "\u20E3"},
		{"keycap on a letter", "a\u20E3"},
		{"tag without cancel", "🏴\U000E0067\U000E0062"},
		{"cancel alone", "🏴\U000E007F"},
		{"unknown shortcode", ":nope:"},
		{"empty shortcode", "::"},
		{"colon alone", ":"},
		{"shortcode with text", ":+1: hi"},
		{"control char", "\x00"},
		{"control with emoji", "👍\n"},
		{"line separator", "\u2028"},
		{"noncharacter", "\uFFFF"},
		{"invalid UTF-8", "\xff\xfe"},
		{"invalid encoding", "%F0%9F%8"},
		{"bad percent", "%zz"},
		{"encoded invalid UTF-8", "%FF"},
		{"65 bytes", strings.Repeat("👍", 17)},
		{"10,000 characters", strings.Repeat("a", 10000)},
		{"10,000 encoded", strings.Repeat("%F0%9F%91%8D", 834)},
		{"html", "<script>"},
		{"sql", "' OR 1=1 --"},
		{"path", "../x"},
		{"bidi override", "\u202E👍"},
		{"surrogate-ish encoded", "%ED%A0%80"},
	} {
		got, err := Parse(tc.in)
		if err == nil {
			t.Errorf("%s: Parse(%q) = %q, want refused", tc.name, tc.in, got)
			continue
		}
		var ce *chat.Error
		if !asError(err, &ce) || ce.Code != chat.EValidation || len(ce.Fields["emoji"]) == 0 {
			t.Errorf("%s: Parse(%q) error %v, want validation_failed on emoji", tc.name, tc.in, err)
		}
	}
}

// Every shortcode is documented in its one spelling, and there are enough.
func TestShortcodesAreNormalized(t *testing.T) {
	if len(Shortcodes) < 60 {
		t.Fatalf("%d shortcodes, want at least 60", len(Shortcodes))
	}
	for name, e := range Shortcodes {
		got, err := Parse(e)
		if err != nil || got != e {
			t.Errorf(":%s: is %q but Parse gives %q, %v", name, e, got, err)
		}
		if name != strings.ToLower(name) {
			t.Errorf("shortcode %q is not lower case", name)
		}
	}
}

// The range tables are sorted and disjoint (inRanges searches them).
func TestRangesSorted(t *testing.T) {
	for _, tab := range [][][2]rune{pictographic, textDefaultSupplementary} {
		for i, r := range tab {
			if r[0] > r[1] || i > 0 && r[0] <= tab[i-1][1] {
				t.Fatalf("range %d %X-%X out of order", i, r[0], r[1])
			}
		}
	}
}
