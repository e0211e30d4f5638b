package translation_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/glossary"
	"github.com/chatbridge/chat/pkg/protect"
	"github.com/chatbridge/chat/pkg/translation"
)

// sent records every text a translator received.
type sent struct {
	mu    sync.Mutex
	texts []string
}

func (s *sent) add(t string) { s.mu.Lock(); s.texts = append(s.texts, t); s.mu.Unlock() }
func (s *sent) all() string  { s.mu.Lock(); defer s.mu.Unlock(); return strings.Join(s.texts, "\n") }

var placeholder = regexp.MustCompile(`<b id="p\d+"/>`)

// upper is a translator that upper-cases every word it receives and keeps
// its placeholders, recording what it was sent.
func upper(s *sent, codes ...string) *fakeTranslator {
	tr := translatorOf(codes...)
	tr.translate = func(_ context.Context, text, _, target string) (translation.Result, error) {
		s.add(text)
		out := placeholder.ReplaceAllStringFunc(strings.ToUpper(placeholder.ReplaceAllString(text, "\x00$0\x00")), strings.ToLower)
		return translation.Result{Text: strings.ReplaceAll(out, "\x00", "")}, nil
	}
	return tr
}

// TestProcessNothingToTranslate: a message of protected spans, emoji and
// shorthand calls no translator, spends nothing and stores nothing.
func TestProcessNothingToTranslate(t *testing.T) {
	for _, content := range []string{
		"lgtm 👍", "+1", "`make test` ✅", "https://ci.example.invalid/builds/4812", "@ana :tada:",
		"```go\nfunc main() {}\n```", "v1.2.3 → 10.0.0.1:8080", "ok, thx!", "| `a` | 42 |\n|---|---|\n| `b` | 7 |",
	} {
		store := &memStore{readers: readersIn(4, "en", "es"), content: content}
		var s sent
		budgets := &fakeBudgets{limit: limitOf(1000)}
		var exceeded []int64
		svc := budgeted(store, upper(&s, "en", "es"), budgets, &clock{t: time.Now()}, &exceeded)
		if err := svc.Process(context.Background(), jobIn("en")); err != nil {
			t.Fatalf("%q: %v", content, err)
		}
		if s.all() != "" || budgets.spendCalls != 0 || len(store.languages(messageID)) != 0 || !store.finished {
			t.Errorf("%q: sent %q, %d spends, stored %v, finished %v; want nothing, finished", content, s.all(),
				budgets.spendCalls, store.languages(messageID), store.finished)
		}
	}
}

// TestProcessProtectsNamesAndGlossary: the author's and the workspace's
// names and the glossary's keep terms are never sent; a fixed term is
// rendered for the target that has a rendering (es, and es-MX by its
// primary subtag) and translated like any word for one that has not (fr).
func TestProcessProtectsNamesAndGlossary(t *testing.T) {
	content := "Frank Will and the on-call team moved Cloud Run to #general for CI Bot"
	store := &memStore{readers: readersIn(6, "en", "es", "fr", "es-MX"), content: content, author: "Frank Will"}
	var s sent
	tr := upper(&s, "en", "es", "es-MX", "fr")
	lex := &fakeLexicon{vocab: translation.Vocabulary{
		Names: protect.Names{Channels: []string{"general"}, Bots: []string{"CI Bot"}},
		Glossary: glossary.Glossary{Version: "g1", Keep: []string{"Cloud Run"},
			Fixed: []glossary.Fixed{{Term: "on-call", Translations: map[string]string{"es": "de guardia"}}}},
	}}
	svc := &translation.Service{Store: store, Translator: tr, Lexicon: lex}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatal(err)
	}
	for _, never := range []string{"Frank", "Will", "Cloud", "general", "CI Bot"} {
		if strings.Contains(s.all(), never) {
			t.Errorf("%q was sent: %q", never, s.all())
		}
	}
	want := map[string]string{
		"es":    "Frank Will AND THE de guardia TEAM MOVED Cloud Run TO #general FOR CI Bot",
		"es-MX": "Frank Will AND THE de guardia TEAM MOVED Cloud Run TO #general FOR CI Bot",
		"fr":    "Frank Will AND THE ON-CALL TEAM MOVED Cloud Run TO #general FOR CI Bot",
	}
	for lang, w := range want {
		if got := store.saved[messageID+"/"+lang].Content; got != w {
			t.Errorf("%s: %q, want %q", lang, got, w)
		}
	}
	if lex.calls != 1 {
		t.Errorf("lexicon read %d times, want 1", lex.calls)
	}
}

// TestProcessLostSpanShowsTheOriginalUnit: a translator that drops a
// placeholder gets that unit shown as written (never a mangled text), the
// other units translated; when no unit survives nothing is stored and the
// readers read the original (translated false).
func TestProcessLostSpanShowsTheOriginalUnit(t *testing.T) {
	store := &memStore{readers: readersIn(2, "es"), content: "Run `make build` now.\n\nThe house is red."}
	tr := translatorOf("en", "es")
	tr.translate = func(_ context.Context, text, _, _ string) (translation.Result, error) {
		return translation.Result{Text: "ES " + placeholder.ReplaceAllString(text, "")}, nil
	}
	if err := (&translation.Service{Store: store, Translator: tr}).Process(context.Background(), jobIn("en")); err != nil {
		t.Fatal(err)
	}
	if got, want := store.saved[messageID+"/es"].Content, "Run `make build` now.\n\nES The house is red."; got != want {
		t.Fatalf("es: %q, want %q", got, want)
	}

	store = &memStore{readers: readersIn(2, "es"), content: "Run `make build` now"}
	if err := (&translation.Service{Store: store, Translator: tr}).Process(context.Background(), jobIn("en")); err != nil {
		t.Fatal(err)
	}
	if got := store.languages(messageID); len(got) != 0 || !store.finished {
		t.Fatalf("stored %v, finished %v: want nothing stored, finished", got, store.finished)
	}
}

// TestProcessMemory: a bot's repeated line is sent once per pair; the
// next one with another build number is recalled, not sent, and charged
// nothing; a new glossary version is not served the old memory.
func TestProcessMemory(t *testing.T) {
	mem := &fakeMemory{}
	var s sent
	tr := upper(&s, "en", "es")
	budgets := &fakeBudgets{limit: limitOf(10_000)}
	lex := &fakeLexicon{vocab: translation.Vocabulary{Glossary: glossary.Glossary{Version: "g1", Keep: []string{"main"}}}}
	for i, tc := range []struct {
		content, glossaryVersion string
		wantSent                 int
		want                     string
	}{
		{"Build 4812 passed on main. Deploy started.", "g1", 2, "BUILD 4812 PASSED ON main. DEPLOY STARTED."},
		{"Build 4813 passed on main. Deploy started.", "g1", 0, "BUILD 4813 PASSED ON main. DEPLOY STARTED."},
		{"Deploy started. Build 4814 passed on main.", "g1", 0, "DEPLOY STARTED. BUILD 4814 PASSED ON main."},
		{"Build 4815 passed on main. Deploy started.", "g2", 2, "BUILD 4815 PASSED ON main. DEPLOY STARTED."},
	} {
		lex.vocab.Glossary.Version = tc.glossaryVersion
		store := &memStore{readers: readersIn(2, "en", "es"), content: tc.content}
		before := len(s.texts)
		var exceeded []int64
		svc := budgeted(store, tr, budgets, &clock{t: time.Now()}, &exceeded)
		svc.Memory, svc.Lexicon = mem, lex
		if err := svc.Process(context.Background(), jobIn("en")); err != nil {
			t.Fatal(err)
		}
		if n := len(s.texts) - before; n != tc.wantSent {
			t.Errorf("message %d: %d units sent, want %d", i, n, tc.wantSent)
		}
		if got := store.saved[messageID+"/es"].Content; got != tc.want {
			t.Errorf("message %d: %q, want %q", i, got, tc.want)
		}
	}
	// `Build <b id="p1"/> passed on <b id="p2"/>.` and `Deploy started.`,
	// 42 + 15 characters as sent, for message 0 and again for message 3.
	if !reflect.DeepEqual(budgets.spends, []int64{57, 57}) {
		t.Errorf("spends %v, want [57 57]: remembered units are not charged", budgets.spends)
	}
}

// TestProcessChargesARevisionOnce: with a OnceSpender, a redelivery after
// a failed language is not charged again; an edit's revision is.
func TestProcessChargesARevisionOnce(t *testing.T) {
	store := &memStore{readers: readersIn(4, "en", "es", "fr")}
	tr := translatorOf("en", "es", "fr")
	fails := 1
	var mu sync.Mutex
	tr.translate = func(_ context.Context, text, _, target string) (translation.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		if target == "fr" && fails > 0 {
			fails--
			return translation.Result{}, errDown
		}
		return translation.Result{Text: target + " " + text}, nil
	}
	budgets := &onceBudgets{fakeBudgets: fakeBudgets{limit: limitOf(1000)}}
	svc := &translation.Service{Store: store, Translator: tr, Budget: &translation.Budget{Store: budgets, Log: quiet}}
	_ = svc.Process(context.Background(), jobIn("en"))
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	edit := jobIn("en")
	edit.Revision = 2
	store.revision = 2
	store.saved = nil // an edit clears the stored translations
	if err := svc.Process(context.Background(), edit); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(budgets.charged, []string{messageID + "#1", messageID + "#2"}) || !reflect.DeepEqual(budgets.spends, []int64{22, 22}) {
		t.Fatalf("charged %v with %v, want revision 1 then 2, 22 characters each", budgets.charged, budgets.spends)
	}
}

// onceBudgets is a OnceSpender over fakeBudgets.
type onceBudgets struct {
	fakeBudgets
	charged []string
}

func (o *onceBudgets) SpendTranslationCharsOnce(ctx context.Context, ws string, day time.Time, chars, limit int64, charge string) (bool, error) {
	for _, c := range o.charged {
		if c == charge {
			return true, nil
		}
	}
	ok, err := o.SpendTranslationChars(ctx, ws, day, chars, limit)
	if ok {
		o.charged = append(o.charged, charge)
	}
	return ok, err
}

// fakeLexicon gives one vocabulary and counts its calls.
type fakeLexicon struct {
	vocab translation.Vocabulary
	calls int
}

func (f *fakeLexicon) Vocabulary(context.Context, string) (translation.Vocabulary, error) {
	f.calls++
	return f.vocab, nil
}

// fakeMemory is a Memory in a map.
type fakeMemory struct {
	mu sync.Mutex
	m  map[translation.MemoryKey]string
}

func (f *fakeMemory) Recall(_ context.Context, keys []translation.MemoryKey) (map[translation.MemoryKey]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[translation.MemoryKey]string{}
	for _, k := range keys {
		if v, ok := f.m[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

func (f *fakeMemory) Remember(_ context.Context, entries map[translation.MemoryKey]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[translation.MemoryKey]string{}
	}
	for k, v := range entries {
		f.m[k] = v
	}
	return nil
}

// htmlTranslator is a Former of the HTML form that records what it gets.
type htmlTranslator struct{ *fakeTranslator }

func (htmlTranslator) Form() translation.Form { return translation.HTML }

// TestProcessSendsTheTranslatorsForm: a translator that names the HTML
// form gets each protected span as a translate="no" element, text escaped.
func TestProcessSendsTheTranslatorsForm(t *testing.T) {
	store := &memStore{readers: readersIn(2, "es"), content: "Run `make test` if Tom & Jerry agree"}
	var s sent
	tr := translatorOf("en", "es")
	tr.translate = func(_ context.Context, text, _, _ string) (translation.Result, error) {
		s.add(text)
		return translation.Result{Text: strings.Replace(text, "Run", "Ejecuta", 1)}, nil
	}
	if err := (&translation.Service{Store: store, Translator: htmlTranslator{tr}}).Process(context.Background(), jobIn("en")); err != nil {
		t.Fatal(err)
	}
	if want := `Run <span translate="no" id="p1">` + "`make test`" + `</span> if Tom &amp; Jerry agree`; s.all() != want {
		t.Fatalf("sent %q, want %q", s.all(), want)
	}
	if got := store.saved[messageID+"/es"].Content; got != "Ejecuta `make test` if Tom & Jerry agree" {
		t.Fatalf("stored %q", got)
	}
}

// TestProcessContinuesWhereItStopped: a message too long to translate
// before the function's deadline (here 30 sentences into 2 languages at 20
// ms a call, 2 at a time, with 300 ms to go and 100 ms kept) starts no call
// past its stop time, remembers what it translated, and fails
// ErrUnfinished; its retry sends only the units not remembered (none
// twice), is not charged again, and stores both translations whole.
func TestProcessContinuesWhereItStopped(t *testing.T) {
	var sentences []string
	for _, w := range strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu apple banana cherry grape") {
		sentences = append(sentences, fmt.Sprintf("The %s report is ready.", w))
	}
	store := &memStore{readers: readersIn(3, "en", "es", "fr"), content: strings.Join(sentences, " ")}
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
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err := svc.Process(ctx, jobIn("en"))
	cancel()
	first := tr.count()
	if !errors.Is(err, translation.ErrUnfinished) || first == 0 || first >= 60 {
		t.Fatalf("first run: %v after %d calls, want ErrUnfinished after some of the 60", err, first)
	}
	if len(mem.m) != first {
		t.Fatalf("first run remembered %d units of the %d it translated", len(mem.m), first)
	}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if total := tr.count(); total != 60 {
		t.Fatalf("%d calls in all, want 60: each unit once", total)
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
		got := store.saved[messageID+"/"+l].Content
		if strings.Count(got, "["+l+"]") != 30 {
			t.Fatalf("%s: %q, want all 30 sentences translated", l, got)
		}
	}
}
