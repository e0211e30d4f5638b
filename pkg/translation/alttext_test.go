package translation_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/translation"
)

// TestProcessTranslatesAltTexts: each attachment's alt text is translated
// into every target the content is, its protected spans (a path, a link)
// kept byte-identical and never sent; an attachment without one stays "".
func TestProcessTranslatesAltTexts(t *testing.T) {
	var s sent
	store := &memStore{readers: readersIn(3, "en", "es", "fr"), content: "Deploy failed, see the log.",
		alts: []string{"Screenshot of config.yaml in the editor", "", "Diagram from https://example.com/arch.png of the system"}}
	svc := &translation.Service{Store: store, Translator: upper(&s, "en", "es", "fr")}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	want := []string{"SCREENSHOT OF config.yaml IN THE EDITOR", "", "DIAGRAM FROM https://example.com/arch.png OF THE SYSTEM"}
	for _, l := range []string{"es", "fr"} {
		tr := store.saved[messageID+"/"+l]
		if tr.Content != "DEPLOY FAILED, SEE THE LOG." || !reflect.DeepEqual(tr.AltTexts, want) {
			t.Errorf("%s: content %q, alt texts %q; want %q", l, tr.Content, tr.AltTexts, want)
		}
	}
	if all := s.all(); strings.Contains(all, "config.yaml") || strings.Contains(all, "example.com") {
		t.Fatalf("a protected span reached the translator:\n%s", all)
	}
	if got := store.languages(messageID); !reflect.DeepEqual(got, []string{"es", "fr"}) || !store.finished {
		t.Fatalf("stored %v (finished %v), want es and fr, finished", got, store.finished)
	}
}

// TestProcessAltTextsWithoutContent: a message whose content is blank, or
// has nothing to translate, is translated for its alt texts; the content
// stored is the original.
func TestProcessAltTextsWithoutContent(t *testing.T) {
	for _, content := range []string{"", "`go test ./...`"} {
		t.Run(fmt.Sprintf("%q", content), func(t *testing.T) {
			var s sent
			store := &memStore{readers: readersIn(2, "en", "es"), content: content, blank: content == "",
				alts: []string{"Build log of the failed deploy"}}
			svc := &translation.Service{Store: store, Translator: upper(&s, "en", "es")}
			if err := svc.Process(context.Background(), jobIn("en")); err != nil {
				t.Fatalf("Process: %v", err)
			}
			tr, ok := store.saved[messageID+"/es"]
			if !ok || tr.Content != content || !reflect.DeepEqual(tr.AltTexts, []string{"BUILD LOG OF THE FAILED DEPLOY"}) {
				t.Fatalf("es: stored %v, content %q, alt texts %q; want the original content and the alt text translated", ok, tr.Content, tr.AltTexts)
			}
			if !store.finished {
				t.Fatal("the message was not finished")
			}
		})
	}
}

// TestProcessAltTextsDetectedLanguage: without content, the message's
// language is detected from its alt texts.
func TestProcessAltTextsDetectedLanguage(t *testing.T) {
	store := &memStore{readers: readersIn(2, "en", "es"), blank: true, alts: []string{"El despliegue terminó bien"}}
	tr := translatorOf("en", "es")
	svc := &translation.Service{Store: store, Translator: tr, Detector: wordDetector{}}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	if got := tr.called(); !reflect.DeepEqual(got, []string{"en"}) {
		t.Fatalf("translated into %v, want en only: the alt text is Spanish", got)
	}
	if got := store.saved[messageID+"/en"]; got.SourceLanguage != "es" || !reflect.DeepEqual(got.AltTexts, []string{"[en] El despliegue terminó bien"}) {
		t.Fatalf("en: source %q, alt texts %q", got.SourceLanguage, got.AltTexts)
	}
}

// TestProcessNothingToTranslateWithAltTexts: alt texts of protected spans
// only, and blank content, cost no call and finish the message.
func TestProcessNothingToTranslateWithAltTexts(t *testing.T) {
	store := &memStore{readers: readersIn(2, "en", "es"), blank: true, alts: []string{"", "config.yaml", "👍"}}
	tr := translatorOf("en", "es")
	svc := &translation.Service{Store: store, Translator: tr}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	if tr.count() != 0 || len(store.saved) != 0 || !store.finished {
		t.Fatalf("%d calls, %d saved, finished %v; want none, none, finished", tr.count(), len(store.saved), store.finished)
	}
}

// TestBudgetCountsAltTexts: the alt texts' characters are charged with the
// content's, a unit shared by both once.
func TestBudgetCountsAltTexts(t *testing.T) {
	budgets := &fakeBudgets{limit: limitOf(10_000)}
	store := &memStore{readers: readersIn(2, "en", "es"), content: "Hello world",
		alts: []string{"Red button ñandú", "Hello world"}}
	var exceeded []int64
	svc := budgeted(store, translatorOf("en", "es"), budgets, &clock{t: time.Now()}, &exceeded)
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	// "Hello world" (11) once, "Red button ñandú" (16 characters, 18 bytes).
	if !reflect.DeepEqual(budgets.spends, []int64{27}) {
		t.Fatalf("spends %v, want [27]", budgets.spends)
	}

	// Past the budget, the alt texts stay untranslated with the content.
	budgets = &fakeBudgets{limit: limitOf(26)}
	store = &memStore{readers: readersIn(2, "en", "es"), content: "Hello world", alts: []string{"Red button ñandú"}}
	tr := translatorOf("en", "es")
	svc = budgeted(store, tr, budgets, &clock{t: time.Now()}, &exceeded)
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	if tr.count() != 0 || len(store.saved) != 0 || !store.finished || !reflect.DeepEqual(exceeded, []int64{27}) {
		t.Fatalf("past the budget: %d calls, %d saved, finished %v, exceeded %v; want none, none, finished, [27]",
			tr.count(), len(store.saved), store.finished, exceeded)
	}
}

// TestProcessAltTextsSize: the bound on a stored translation counts its
// content and alt texts together, at the limit and one byte past it.
func TestProcessAltTextsSize(t *testing.T) {
	const content = 200_000
	for _, tc := range []struct {
		name    string
		alt     int
		flagged string
	}{
		{"at the limit", translation.MaxTranslationBytes - content, ""},
		{"one byte past", translation.MaxTranslationBytes - content + 1, translation.UntranslatedTooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &memStore{readers: readersIn(2, "es"), content: "Hello world", alts: []string{"Red button"}}
			tr := translatorOf("en", "es")
			tr.translate = func(_ context.Context, text, _, _ string) (translation.Result, error) {
				if text == "Hello world" {
					return translation.Result{Text: strings.Repeat("a", content)}, nil
				}
				return translation.Result{Text: strings.Repeat("b", tc.alt)}, nil
			}
			svc := &translation.Service{Store: store, Translator: tr}
			if err := svc.Process(context.Background(), jobIn("en")); err != nil {
				t.Fatalf("Process: %v", err)
			}
			saved := store.saved[messageID+"/es"]
			if saved.Untranslated != tc.flagged {
				t.Fatalf("flagged %q, want %q", saved.Untranslated, tc.flagged)
			}
			if tc.flagged != "" && (saved.Content != "Hello world" || saved.AltTexts != nil) {
				t.Fatalf("too long: content of %d bytes, alt texts %d; want the original, none", len(saved.Content), len(saved.AltTexts))
			}
			if tc.flagged == "" && (len(saved.Content) != content || len(saved.AltTexts) != 1 || len(saved.AltTexts[0]) != tc.alt) {
				t.Fatalf("at the limit: content of %d bytes, alt texts %d; want both stored", len(saved.Content), len(saved.AltTexts))
			}
		})
	}
}

// TestProcessAltTextsFailedTarget: a failed call for an alt text fails its
// target as a content's would, and the retry sends only that unit.
func TestProcessAltTextsFailedTarget(t *testing.T) {
	store := &memStore{readers: readersIn(3, "en", "es", "fr"), content: "Hello world", alts: []string{"Red button"}}
	tr := translatorOf("en", "es", "fr")
	fails := 1
	var mu sync.Mutex
	tr.translate = func(_ context.Context, text, _, target string) (translation.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		if target == "fr" && text == "Red button" && fails > 0 {
			fails--
			return translation.Result{}, errDown
		}
		return translation.Result{Text: "[" + target + "] " + text}, nil
	}
	mem := &fakeMemory{}
	svc := &translation.Service{Store: store, Translator: tr, Memory: mem}
	var failed *translation.FailedError
	if err := svc.Process(context.Background(), jobIn("en")); !errors.As(err, &failed) || !reflect.DeepEqual(failed.Languages, []string{"fr"}) {
		t.Fatalf("first run: %v, want fr failed", err)
	}
	if got := store.languages(messageID); !reflect.DeepEqual(got, []string{"es"}) {
		t.Fatalf("stored %v, want es only", got)
	}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if tr.count() != 5 {
		t.Fatalf("%d calls, want 5: the retry sends only the failed alt text", tr.count())
	}
	if got := store.saved[messageID+"/fr"]; got.Content != "[fr] Hello world" || !reflect.DeepEqual(got.AltTexts, []string{"[fr] Red button"}) {
		t.Fatalf("fr: %q %q", got.Content, got.AltTexts)
	}
}

// TestProcessAltTextsContinueWhereTheyStopped: a run cut by the deadline
// remembers the alt texts it translated; the retry sends only the others,
// and the revision is charged once.
func TestProcessAltTextsContinueWhereTheyStopped(t *testing.T) {
	var alts []string
	for _, w := range strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet") {
		alts = append(alts, fmt.Sprintf("The %s chart of the week.", w))
	}
	store := &memStore{readers: readersIn(3, "en", "es", "fr"), blank: true, alts: alts}
	tr := translatorOf("en", "es", "fr")
	var mu sync.Mutex
	seen := map[string]int{}
	tr.translate = func(_ context.Context, text, _, target string) (translation.Result, error) {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		seen[target+"|"+text]++
		mu.Unlock()
		return translation.Result{Text: "[" + target + "] " + text}, nil
	}
	budgets := &onceBudgets{fakeBudgets: fakeBudgets{limit: limitOf(100_000)}}
	mem := &fakeMemory{}
	svc := &translation.Service{Store: store, Translator: tr, Memory: mem, Concurrency: 2, Reserve: 100 * time.Millisecond,
		Budget: &translation.Budget{Store: budgets, Log: quiet}}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	err := svc.Process(ctx, jobIn("en"))
	cancel()
	first := tr.count()
	if !errors.Is(err, translation.ErrUnfinished) || first == 0 || first >= 20 {
		t.Fatalf("first run: %v after %d calls, want ErrUnfinished after some of the 20", err, first)
	}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if total := tr.count(); total != 20 {
		t.Fatalf("%d calls in all, want 20: each alt text once per target", total)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%q sent %d times", k, n)
		}
	}
	if len(budgets.charged) != 1 || len(budgets.spends) != 1 {
		t.Fatalf("charged %v (spends %v), want the revision once", budgets.charged, budgets.spends)
	}
	for _, l := range []string{"es", "fr"} {
		got := store.saved[messageID+"/"+l].AltTexts
		if len(got) != len(alts) {
			t.Fatalf("%s: %d alt texts, want %d", l, len(got), len(alts))
		}
		for i, a := range got {
			if a != "["+l+"] "+alts[i] {
				t.Fatalf("%s: alt text %d is %q", l, i, a)
			}
		}
	}
}
