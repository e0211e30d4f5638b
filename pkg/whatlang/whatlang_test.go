package whatlang_test

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/whatlang"
)

type sample struct{ lang, text string }

func samples(t testing.TB) []sample {
	f, err := os.Open("testdata/short.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lang, text, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			t.Fatalf("bad line %q", sc.Text())
		}
		out = append(out, sample{lang, text})
	}
	return out
}

// score is the detector's result on a set: how many it answered
// (coverage) and how many of those were right (precision).
type score struct{ n, answered, right int }

func (s score) String() string {
	if s.n == 0 {
		return "-"
	}
	p := 0.0
	if s.answered > 0 {
		p = 100 * float64(s.right) / float64(s.answered)
	}
	return fmt.Sprintf("%d/%d answered (%.0f%%), %.1f%% right", s.answered, s.n, 100*float64(s.answered)/float64(s.n), p)
}

func run(d whatlang.Detector, set []sample, candidates []string) (score, map[string]*score) {
	var all score
	by := map[string]*score{}
	for _, s := range set {
		key := s.lang + " " + bucket(s.text)
		if by[key] == nil {
			by[key] = &score{}
		}
		got, ok := d.Detect(s.text, candidates)
		for _, sc := range []*score{&all, by[key]} {
			sc.n++
			if ok {
				sc.answered++
				if got == s.lang {
					sc.right++
				}
			}
		}
	}
	return all, by
}

func bucket(text string) string {
	switch n := len([]rune(text)); {
	case n < 20:
		return "<20"
	case n < 40:
		return "20-39"
	default:
		return "40+"
	}
}

func enes(set []sample) []sample {
	var out []sample
	for _, s := range set {
		if s.lang == "en" || s.lang == "es" {
			out = append(out, s)
		}
	}
	return out
}

// TestAccuracy holds the detector to its floors on short chat messages
// (testdata/short.tsv): with the languages in play ({en, es}, the local
// Apertium pair), a confident answer is right at least 98% of the time and
// answers at least 85% of the messages; among all its languages, a
// confident answer is right at least 90% of the time.
func TestAccuracy(t *testing.T) {
	set := samples(t)
	d := whatlang.Detector{}
	pair, _ := run(d, enes(set), []string{"en", "es"})
	if pair.answered == 0 || float64(pair.right) < 0.98*float64(pair.answered) || float64(pair.answered) < 0.85*float64(pair.n) {
		t.Errorf("candidates {en, es}: %v; want ≥ 98%% right and ≥ 85%% answered", pair)
	}
	all, _ := run(d, set, nil)
	if all.answered == 0 || float64(all.right) < 0.90*float64(all.answered) {
		t.Errorf("all languages: %v; want ≥ 90%% right", all)
	}
}

// TestAccuracyReport only prints the table of docs/translation.md:
//
//	go test -count=1 -run TestAccuracyReport -v ./pkg/whatlang/
func TestAccuracyReport(t *testing.T) {
	set := samples(t)
	d := whatlang.Detector{}
	var b strings.Builder
	for _, c := range []struct {
		name       string
		set        []sample
		candidates []string
	}{
		{"candidates {en, es}", enes(set), []string{"en", "es"}},
		{"candidates {en, es, fr, de, pt, it}", set, []string{"en", "es", "fr", "de", "pt", "it"}},
		{"all of whatlanggo's languages", set, nil},
	} {
		all, by := run(d, c.set, c.candidates)
		fmt.Fprintf(&b, "\n%s: %v\n", c.name, all)
		var keys []string
		for k := range by {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-9s %v\n", k, by[k])
		}
	}
	t.Log(b.String())
}

func TestTooShortOrOneCandidate(t *testing.T) {
	d := whatlang.Detector{}
	for _, tc := range []struct {
		text       string
		candidates []string
	}{
		{"ok gracias", []string{"en", "es"}},       // too short
		{"the build is red again", []string{"en"}}, // one candidate: nothing to choose
		{"the build is red again", []string{"xx"}}, // unknown candidate
		{"the build is red again", []string{"en-US", "tlh"}},
	} {
		if got, ok := d.Detect(tc.text, tc.candidates); ok {
			t.Errorf("%q %v: %q, want no confident answer", tc.text, tc.candidates, got)
		}
	}
	if got, ok := d.Detect("the build is red again and nobody knows why", []string{"en-US", "es-MX"}); !ok || got != "en" {
		t.Errorf("regional candidates: %q %v, want en", got, ok)
	}
}
