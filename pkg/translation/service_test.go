package translation_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/translation"
)

// fakeTranslator is a Translator with function fields that counts its calls.
type fakeTranslator struct {
	targets   func(ctx context.Context, source string) (*translation.Languages, error)
	translate func(ctx context.Context, text, source, target string) (translation.Result, error)

	mu      sync.Mutex
	calls   int
	targetN map[string]int
}

func (f *fakeTranslator) Targets(ctx context.Context, source string) (*translation.Languages, error) {
	return f.targets(ctx, source)
}

func (f *fakeTranslator) Translate(ctx context.Context, text, source, target string) (translation.Result, error) {
	f.mu.Lock()
	f.calls++
	if f.targetN == nil {
		f.targetN = map[string]int{}
	}
	f.targetN[target]++
	f.mu.Unlock()
	if f.translate == nil {
		return translation.Result{Text: "[" + target + "] " + text}, nil
	}
	return f.translate(ctx, text, source, target)
}

func (f *fakeTranslator) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// called returns the targets translated into, sorted.
func (f *fakeTranslator) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for t := range f.targetN {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// translatorOf returns a counting translator that supports codes whatever
// the source, like a detecting translator's list.
func translatorOf(codes ...string) *fakeTranslator {
	langs := translation.NewLanguages(codes...)
	return &fakeTranslator{targets: func(context.Context, string) (*translation.Languages, error) { return langs, nil }}
}

// memStore is an in-memory Store of one message (content "Hello world",
// marked untranslated until finished) that remembers what was saved and
// counts its calls.
type memStore struct {
	readers []translation.Reader
	// content replaces the message's content when set; blank makes it "".
	content string
	blank   bool
	// alts are the alt texts of the message's attachments.
	alts []string
	// author is the message's author's name; revision its revision.
	author   string
	revision int

	mu           sync.Mutex
	saved        map[string]chat.Translation // by message/language
	finished     bool                        // the marker was cleared
	readerCalls  int
	doneCalls    int
	saveCalls    int
	saveFailures int // fail this many SaveTranslations calls first
}

func (m *memStore) Readers(_ context.Context, _ string, _ time.Time) ([]translation.Reader, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.readerCalls++
	return m.readers, nil
}

// addressed checks that the service addresses a message by the job's
// channel, as the message item's key needs.
func addressed(ch, msg string) error {
	if ch != channelID || msg != messageID {
		return chat.Internal(fmt.Errorf("store asked for message %s of channel %s, want %s of %s", msg, ch, messageID, channelID))
	}
	return nil
}

func (m *memStore) Message(_ context.Context, ch, messageID string) (translation.Stored, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.doneCalls++
	if err := addressed(ch, messageID); err != nil {
		return translation.Stored{}, err
	}
	done := map[string]bool{}
	for _, tr := range m.saved {
		if tr.MessageID == messageID {
			done[tr.Language] = true
		}
	}
	content := m.content
	if content == "" && !m.blank {
		content = "Hello world"
	}
	return translation.Stored{Content: content, AltTexts: m.alts, Done: done, Marked: !m.finished, AuthorName: m.author, Revision: max(1, m.revision)}, nil
}

func (m *memStore) SaveTranslations(_ context.Context, ch, msg string, ts []chat.Translation, finished bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.saveCalls++
	if err := addressed(ch, msg); err != nil {
		return err
	}
	for _, tr := range ts {
		if tr.MessageID != msg {
			return chat.Internal(fmt.Errorf("saving a translation of %s as one of %s", tr.MessageID, msg))
		}
	}
	if m.saveFailures > 0 {
		m.saveFailures--
		return chat.Unavailable(errors.New("store down"))
	}
	if m.saved == nil {
		m.saved = map[string]chat.Translation{}
	}
	for _, tr := range ts {
		m.saved[tr.MessageID+"/"+tr.Language] = tr
	}
	m.finished = m.finished || finished
	return nil
}

var errDown = chat.Unavailable(errors.New("translator down"))

// languages returns the stored languages of message, sorted.
func (m *memStore) languages(messageID string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, tr := range m.saved {
		if tr.MessageID == messageID {
			out = append(out, tr.Language)
		}
	}
	sort.Strings(out)
	return out
}

// readersIn returns n readers whose languages cycle through langs.
func readersIn(n int, langs ...string) []translation.Reader {
	rs := make([]translation.Reader, n)
	for i := range rs {
		rs[i] = translation.Reader{Kind: chat.AuthorGuest, ID: fmt.Sprintf("R%05d", i), Language: langs[i%len(langs)]}
	}
	return rs
}

const (
	messageID = "01JDZ8Y7K3Q4W5E6R7T8Y9A0MM"
	channelID = "01JDZ8Y7K3Q4W5E6R7T8Y9A0CC"
)

func jobIn(source string) messages.Job {
	return messages.Job{MessageID: messageID, WorkspaceID: "01JDZ8Y7K3Q4W5E6R7T8Y9A0WW", ChannelID: channelID,
		Content: "Hello world", SourceLanguage: source, AuthorType: chat.AuthorBot, CreatedAt: time.Now()}
}

// twelve is a translator's list with twelve languages.
var twelve = []string{"en", "es", "fr", "de", "it", "pt", "ja", "ko", "zh", "ru", "ar", "hi"}

func TestProcessFanOut(t *testing.T) {
	readerLangs12 := []string{"en-US", "es-ES", "fr-FR", "de-DE", "it", "pt-BR", "ja", "ko", "zh-CN", "ru", "ar", "hi"}
	for _, tc := range []struct {
		name       string
		translator *fakeTranslator
		job        messages.Job
		readers    []translation.Reader
		wantCalls  int
		wantStored []string
	}{
		{
			name: "8 readers in 2 languages: one call", translator: translatorOf(twelve...), job: jobIn("en"),
			readers: readersIn(8, "en", "es-ES"), wantCalls: 1, wantStored: []string{"es"},
		},
		{
			name: "1,000 readers in 12 languages: one call per target but the source", translator: translatorOf(twelve...),
			job: jobIn("en"), readers: readersIn(1000, readerLangs12...), wantCalls: 11,
			wantStored: []string{"ar", "de", "es", "fr", "hi", "it", "ja", "ko", "pt", "ru", "zh"},
		},
		{
			name: "es-ES, es-MX, es with one Spanish: one call", translator: translatorOf("en", "es"), job: jobIn("en"),
			readers: readersIn(6, "es-ES", "es-MX", "es"), wantCalls: 1, wantStored: []string{"es"},
		},
		{
			name: "es-ES, es-MX, es with es and es-MX: two calls", translator: translatorOf("en", "es", "es-MX"), job: jobIn("en"),
			readers: readersIn(6, "es-ES", "es-MX", "es"), wantCalls: 2, wantStored: []string{"es", "es-MX"},
		},
		{
			name: "no call into the source language", translator: translatorOf("en", "es"), job: jobIn("es-ES"),
			readers: readersIn(5, "es", "es-MX", "es-AR"), wantCalls: 0,
		},
		{
			name: "readers in languages the translator lacks: no call", translator: translatorOf("en", "es"), job: jobIn("en"),
			readers: readersIn(4, "ja", "ko", "en-GB"), wantCalls: 0,
		},
		{
			name: "no readers: no call", translator: translatorOf(twelve...), job: jobIn("en"), wantCalls: 0,
		},
		{
			name: "skip_translation: no call", translator: translatorOf(twelve...),
			job:     func() messages.Job { j := jobIn("en"); j.SkipTranslation = true; return j }(),
			readers: readersIn(8, "en", "es", "fr"), wantCalls: 0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &memStore{readers: tc.readers}
			svc := &translation.Service{Store: store, Translator: tc.translator}
			if err := svc.Process(context.Background(), tc.job); err != nil {
				t.Fatalf("Process: %v", err)
			}
			if got := tc.translator.count(); got != tc.wantCalls {
				t.Fatalf("translator calls: got %d (%v), want %d", got, tc.translator.called(), tc.wantCalls)
			}
			if got := store.languages(messageID); !reflect.DeepEqual(got, tc.wantStored) {
				t.Fatalf("stored languages: got %v, want %v", got, tc.wantStored)
			}
			if tc.job.SkipTranslation && store.readerCalls+store.doneCalls+store.saveCalls != 0 {
				t.Fatalf("skip_translation touched the store: %d reader, %d done, %d save calls", store.readerCalls, store.doneCalls, store.saveCalls)
			}
		})
	}
}

func TestProcessStoresTranslationFields(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	store := &memStore{readers: readersIn(2, "en", "es")}
	svc := &translation.Service{Store: store, Translator: translatorOf("en", "es"), Now: func() time.Time { return now }}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	got := store.saved[messageID+"/es"]
	want := chat.Translation{MessageID: messageID, Language: "es", Content: "[es] Hello world", SourceLanguage: "en", CreatedAt: now, Revision: 1}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("stored %+v, want %+v", got, want)
	}
}

func TestProcessRedelivery(t *testing.T) {
	store := &memStore{readers: readersIn(30, "en", "es", "fr", "de")}
	tr := translatorOf(twelve...)
	svc := &translation.Service{Store: store, Translator: tr}
	ctx := context.Background()
	if err := svc.Process(ctx, jobIn("en")); err != nil {
		t.Fatalf("first delivery: %v", err)
	}
	if got := tr.count(); got != 3 {
		t.Fatalf("first delivery: got %d translator calls, want 3", got)
	}
	store.saveCalls = 0
	if err := svc.Process(ctx, jobIn("en")); err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	if got := tr.count(); got != 3 {
		t.Fatalf("redelivery made %d more translator calls, want 0", got-3)
	}
	if store.saveCalls != 0 {
		t.Fatalf("redelivery wrote %d times, want 0", store.saveCalls)
	}
}

func TestProcessPartialFailure(t *testing.T) {
	store := &memStore{readers: readersIn(12, "en", "es", "fr", "de")}
	var failFrench atomic.Bool
	failFrench.Store(true)
	tr := translatorOf(twelve...)
	cause := chat.Unavailable(errors.New("throttled"))
	tr.translate = func(_ context.Context, text, _, target string) (translation.Result, error) {
		if target == "fr" && failFrench.Load() {
			return translation.Result{}, cause
		}
		return translation.Result{Text: target + ":" + text}, nil
	}
	svc := &translation.Service{Store: store, Translator: tr}
	ctx := context.Background()

	err := svc.Process(ctx, jobIn("en"))
	var failed *translation.FailedError
	if !errors.As(err, &failed) {
		t.Fatalf("Process: got %v, want a *FailedError", err)
	}
	if !reflect.DeepEqual(failed.Languages, []string{"fr"}) || failed.MessageID != messageID {
		t.Fatalf("failed: got %s %v, want %s [fr]", failed.MessageID, failed.Languages, messageID)
	}
	if !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("failure cause lost: %v", err)
	}
	if got, want := store.languages(messageID), []string{"de", "es"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("stored despite the failure: got %v, want %v", got, want)
	}

	// Redelivery redoes only the failed language.
	failFrench.Store(false)
	before := tr.count()
	if err := svc.Process(ctx, jobIn("en")); err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	if got := tr.count() - before; got != 1 || tr.targetN["fr"] != 2 {
		t.Fatalf("redelivery: got %d calls (fr %d times in all), want 1 call, into fr", got, tr.targetN["fr"])
	}
	if got, want := store.languages(messageID), []string{"de", "es", "fr"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after redelivery: stored %v, want %v", got, want)
	}
}

func TestProcessSaveFailureIsReported(t *testing.T) {
	store := &memStore{readers: readersIn(2, "en", "es"), saveFailures: 1}
	svc := &translation.Service{Store: store, Translator: translatorOf("en", "es")}
	err := svc.Process(context.Background(), jobIn("en"))
	if !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("Process: got %v, want the store's EUnavailable", err)
	}
}

func TestProcessUnsupportedTargetIsSkippedNotFailed(t *testing.T) {
	store := &memStore{readers: readersIn(3, "es", "fr", "de")}
	tr := translatorOf("en", "es", "fr", "de")
	tr.translate = func(_ context.Context, text, _, target string) (translation.Result, error) {
		if target == "de" {
			return translation.Result{}, fmt.Errorf("pair en-de: %w", translation.ErrUnsupported)
		}
		return translation.Result{Text: "[" + target + "] " + text}, nil
	}
	svc := &translation.Service{Store: store, Translator: tr}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	if got, want := store.languages(messageID), []string{"es", "fr"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
}

// TestProcessDetectedLanguage: the job says en, the detector finds
// Spanish: the es readers (es-ES and es-MX alike) read the original, the
// en and fr readers get a translation from es.
func TestProcessDetectedLanguage(t *testing.T) {
	store := &memStore{readers: readersIn(8, "en", "es-ES", "es-MX", "fr"), content: "El despliegue terminó bien"}
	tr := translatorOf("en", "es", "es-MX", "fr")
	var mu sync.Mutex
	sources := map[string]string{}
	tr.translate = func(_ context.Context, text, source, target string) (translation.Result, error) {
		mu.Lock()
		sources[target] = source
		mu.Unlock()
		return translation.Result{Text: target + ":" + text}, nil
	}
	svc := &translation.Service{Store: store, Translator: tr, Detector: wordDetector{}}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	if got, want := tr.called(), []string{"en", "fr"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("translated into %v, want %v", got, want)
	}
	if !reflect.DeepEqual(sources, map[string]string{"en": "es", "fr": "es"}) {
		t.Fatalf("sources sent %v, want es for both", sources)
	}
	if tr := store.saved[messageID+"/fr"]; tr.SourceLanguage != "es" {
		t.Fatalf("fr translation: source %q, want the detected es", tr.SourceLanguage)
	}
}

// TestProcessSentenceInTheReadersLanguage: a Spanish sentence inside an
// English message is left as it is for Spanish readers, and translated
// for the others; the English one is left as it is for English readers.
func TestProcessSentenceInTheReadersLanguage(t *testing.T) {
	store := &memStore{readers: readersIn(6, "en", "es", "fr"), content: "The build is red. El despliegue terminó bien."}
	tr := translatorOf("en", "es", "fr")
	svc := &translation.Service{Store: store, Translator: tr, Detector: wordDetector{}}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	for lang, want := range map[string]string{
		"es": "[es] The build is red. El despliegue terminó bien.",
		"en": "The build is red. [en] El despliegue terminó bien.",
		"fr": "[fr] The build is red. [fr] El despliegue terminó bien.",
	} {
		if got := store.saved[messageID+"/"+lang].Content; got != want {
			t.Errorf("%s: %q, want %q", lang, got, want)
		}
	}
}

func TestProcessNoneTranslatorReadsNothing(t *testing.T) {
	store := &memStore{readers: readersIn(8, "en", "es")}
	svc := &translation.Service{Store: store, Translator: translation.None}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	if store.readerCalls+store.doneCalls != 0 {
		t.Fatalf("none translator read the store: %d reader, %d message calls", store.readerCalls, store.doneCalls)
	}
	// Nothing to translate is finished: one write clears the marker.
	if store.saveCalls != 1 || !store.finished || len(store.saved) != 0 {
		t.Fatalf("none translator: %d save calls, finished %v, %d translations; want 1, true, 0", store.saveCalls, store.finished, len(store.saved))
	}
}

func TestProcessConcurrencyBound(t *testing.T) {
	many := []string{"en", "es", "fr", "de", "it", "pt", "ja", "ko", "zh", "ru", "ar", "hi", "nl", "sv", "pl", "tr", "uk", "cs", "el", "he"}
	for _, tc := range []struct {
		concurrency, want int
	}{{0, translation.DefaultConcurrency}, {1, 1}, {3, 3}, {50, len(many) - 1}} {
		t.Run(fmt.Sprintf("concurrency %d", tc.concurrency), func(t *testing.T) {
			var inFlight, maxInFlight atomic.Int32
			release := make(chan struct{})
			tr := translatorOf(many...)
			tr.translate = func(ctx context.Context, text, _, _ string) (translation.Result, error) {
				n := inFlight.Add(1)
				defer inFlight.Add(-1)
				for {
					m := maxInFlight.Load()
					if n <= m || maxInFlight.CompareAndSwap(m, n) {
						break
					}
				}
				<-release // every call waits: in flight together, as many as the bound lets start
				return translation.Result{Text: "[x] " + text}, nil
			}
			store := &memStore{readers: readersIn(len(many), many...)}
			svc := &translation.Service{Store: store, Translator: tr, Concurrency: tc.concurrency}
			done := make(chan error, 1)
			go func() { done <- svc.Process(context.Background(), jobIn("en")) }()
			// Wait (not timed: the deadline only ends a hung test) until the
			// bound's worth of calls are in flight; none can finish before
			// the release, so more would show.
			for deadline := time.Now().Add(30 * time.Second); int(inFlight.Load()) < tc.want && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(10 * time.Millisecond) // room for a call past the bound to start, were it allowed
			close(release)
			if err := <-done; err != nil {
				t.Fatalf("Process: %v", err)
			}
			if got := int(maxInFlight.Load()); got != tc.want {
				t.Fatalf("max in flight: got %d, want %d", got, tc.want)
			}
			if got := tr.count(); got != len(many)-1 {
				t.Fatalf("calls: got %d, want %d", got, len(many)-1)
			}
		})
	}
}

func TestProcessReportsTargetsFailure(t *testing.T) {
	tr := &fakeTranslator{targets: func(context.Context, string) (*translation.Languages, error) {
		return nil, chat.Unavailable(errors.New("listPairs: connection refused"))
	}}
	svc := &translation.Service{Store: &memStore{}, Translator: tr}
	if err := svc.Process(context.Background(), jobIn("en")); !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("Process: got %v, want EUnavailable", err)
	}
}

// discardStore reads a fixed reader list, has nothing stored and drops
// what it is given: the fan-out's own cost, with no storage behind it.
type discardStore struct{ readers []translation.Reader }

func (d discardStore) Readers(context.Context, string, time.Time) ([]translation.Reader, error) {
	return d.readers, nil
}
func (discardStore) Message(context.Context, string, string) (translation.Stored, error) {
	return translation.Stored{Content: "Hello world"}, nil
}
func (discardStore) SaveTranslations(context.Context, string, string, []chat.Translation, bool) error {
	return nil
}

type echoTranslator struct{ langs *translation.Languages }

func (e echoTranslator) Targets(context.Context, string) (*translation.Languages, error) {
	return e.langs, nil
}
func (echoTranslator) Translate(_ context.Context, text, _, _ string) (translation.Result, error) {
	return translation.Result{Text: text}, nil
}

func BenchmarkFanOut1000Readers(b *testing.B) {
	readerLangs := []string{"en-US", "es-ES", "fr-FR", "de-DE", "it", "pt-BR", "ja", "ko", "zh-CN", "ru", "ar", "hi"}
	svc := &translation.Service{
		Store:      discardStore{readers: readersIn(1000, readerLangs...)},
		Translator: echoTranslator{langs: translation.NewLanguages(twelve...)},
	}
	job := jobIn("en")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := svc.Process(ctx, job); err != nil {
			b.Fatal(err)
		}
	}
}

type countingObserver struct {
	mu    sync.Mutex
	calls int
	chars int
	errs  int
}

func (o *countingObserver) Translated(_ context.Context, _ string, chars int, _ time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls++
	o.chars += chars
	if err != nil {
		o.errs++
	}
}

func TestObserverSeesEveryTranslatorCall(t *testing.T) {
	obs := &countingObserver{}
	tr := translatorOf(twelve...)
	svc := &translation.Service{Store: &memStore{readers: readersIn(40, "es-ES", "fr", "de")}, Translator: tr, Observer: obs}
	job := jobIn("en")
	if err := svc.Process(context.Background(), job); err != nil {
		t.Fatalf("process: %v", err)
	}
	if obs.calls != tr.count() || obs.calls != 3 {
		t.Fatalf("observer saw %d calls, the translator made %d, want 3", obs.calls, tr.count())
	}
	if want := 3 * len([]rune(job.Content)); obs.chars != want {
		t.Fatalf("observer counted %d characters, want %d", obs.chars, want)
	}
}

// goneStore holds readers but no message: it was deleted after queueing.
type goneStore struct{ discardStore }

func (goneStore) Message(context.Context, string, string) (translation.Stored, error) {
	return translation.Stored{}, chat.Errorf(chat.ENotFound, "no such message")
}

func TestProcessSkipsAMessageThatIsGone(t *testing.T) {
	tr := translatorOf(twelve...)
	svc := &translation.Service{Store: goneStore{discardStore{readers: readersIn(10, "es", "fr")}}, Translator: tr}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("process: %v, want nil: nothing to do", err)
	}
	if n := tr.count(); n != 0 {
		t.Fatalf("%d translator calls for a message that is gone, want 0", n)
	}
}

// TestProcessFinishesTheMessage holds the untranslated marker's life: it is
// cleared in the write that records the languages once nothing failed, by
// one write when there is nothing to translate, and never for a message
// that failed somewhere or skips translation.
func TestProcessFinishesTheMessage(t *testing.T) {
	failFrench := func(_ context.Context, text, _, target string) (translation.Result, error) {
		if target == "fr" {
			return translation.Result{}, chat.Unavailable(errors.New("throttled"))
		}
		return translation.Result{Text: target + ":" + text}, nil
	}
	for _, tc := range []struct {
		name                 string
		job                  messages.Job
		readers              []translation.Reader
		translate            func(context.Context, string, string, string) (translation.Result, error)
		wantErr              bool
		wantReads, wantSaves int
		wantFinished         bool
		wantStored           []string
	}{
		{name: "translated: the marker goes with the languages, one write", job: jobIn("en"),
			readers: readersIn(4, "es", "de"), wantReads: 1, wantSaves: 1, wantFinished: true, wantStored: []string{"de", "es"}},
		{name: "one language failed: stored, not finished", job: jobIn("en"), translate: failFrench,
			readers: readersIn(4, "es", "fr"), wantErr: true, wantReads: 1, wantSaves: 1, wantStored: []string{"es"}},
		{name: "every reader reads the source: one write, no read", job: jobIn("en"),
			readers: readersIn(4, "en", "en-GB"), wantSaves: 1, wantFinished: true},
		{name: "no readers: one write, no read", job: jobIn("en"), wantSaves: 1, wantFinished: true},
		{name: "skip_translation: no marker, no call",
			job:     func() messages.Job { j := jobIn("en"); j.SkipTranslation = true; return j }(),
			readers: readersIn(4, "es")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &memStore{readers: tc.readers}
			tr := translatorOf(twelve...)
			tr.translate = tc.translate
			err := (&translation.Service{Store: store, Translator: tr}).Process(context.Background(), tc.job)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Process: %v, want an error %v", err, tc.wantErr)
			}
			if store.doneCalls != tc.wantReads || store.saveCalls != tc.wantSaves || store.finished != tc.wantFinished {
				t.Fatalf("got %d message reads, %d writes, finished %v; want %d, %d, %v",
					store.doneCalls, store.saveCalls, store.finished, tc.wantReads, tc.wantSaves, tc.wantFinished)
			}
			if got := store.languages(messageID); !reflect.DeepEqual(got, tc.wantStored) {
				t.Fatalf("stored %v, want %v", got, tc.wantStored)
			}
		})
	}
}

// TestProcessTranslatesTheStoredContent: the job carries no content; the
// translator gets the message's, read with what is already translated.
// The worst content is all protected: no call, nothing stored, finished.
func TestProcessTranslatesTheStoredContent(t *testing.T) {
	for name, tc := range map[string]struct{ content, sent string }{
		"words":         {"Hello <b> & world", `Hello <b id="p1"/> &amp; world`},
		"40,000 '<'":    {strings.Repeat("<", 40000), ""},
		"40,000 U+2028": {strings.Repeat("\u2028", 40000), ""},
		"40,000 emoji":  {strings.Repeat("😀", 40000), ""},
		"40,000 U+FFFF": {strings.Repeat("\uffff", 40000), ""},
	} {
		t.Run(name, func(t *testing.T) {
			store := &memStore{readers: readersIn(2, "es"), content: tc.content}
			var got string
			tr := translatorOf("en", "es")
			tr.translate = func(_ context.Context, text, _, _ string) (translation.Result, error) {
				got = text
				return translation.Result{Text: "es " + text}, nil
			}
			job := jobIn("en")
			job.Content = ""
			if err := (&translation.Service{Store: store, Translator: tr}).Process(context.Background(), job); err != nil {
				t.Fatalf("Process: %v", err)
			}
			if got != tc.sent {
				t.Fatalf("translator got %q, want %q", got, tc.sent)
			}
			if tc.sent == "" && (len(store.languages(messageID)) != 0 || !store.finished) {
				t.Fatalf("stored %v, finished %v; want nothing stored, finished", store.languages(messageID), store.finished)
			}
		})
	}
}

// TestProcessOversizedTranslation: an answer at MaxTranslationBytes is
// stored; one byte more is stored as the original text, flagged, and
// recorded, so that the readers read the original and a redelivery does
// not ask again.
func TestProcessOversizedTranslation(t *testing.T) {
	original := strings.Repeat("word ", 7999) + "word"
	for _, tc := range []struct {
		name    string
		answer  string
		want    string
		flagged string
	}{
		{"at the limit", strings.Repeat("a", translation.MaxTranslationBytes), strings.Repeat("a", translation.MaxTranslationBytes), ""},
		{"one byte past", strings.Repeat("a", translation.MaxTranslationBytes+1), original, translation.UntranslatedTooLong},
		{"emoji past", strings.Repeat("😀", translation.MaxTranslationBytes/4+1), original, translation.UntranslatedTooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &memStore{readers: readersIn(2, "es"), content: original}
			tr := translatorOf("en", "es")
			tr.translate = func(context.Context, string, string, string) (translation.Result, error) {
				return translation.Result{Text: tc.answer, SourceLanguage: "en"}, nil
			}
			svc := &translation.Service{Store: store, Translator: tr}
			if err := svc.Process(context.Background(), jobIn("en")); err != nil {
				t.Fatalf("Process: %v", err)
			}
			saved := store.saved[messageID+"/es"]
			if saved.Content != tc.want || saved.Untranslated != tc.flagged || !store.finished {
				t.Fatalf("stored %d bytes flagged %q (finished %v), want %d bytes flagged %q, finished",
					len(saved.Content), saved.Untranslated, store.finished, len(tc.want), tc.flagged)
			}
			if err := svc.Process(context.Background(), jobIn("en")); err != nil || tr.count() != 1 {
				t.Fatalf("redelivery: %v, %d translator calls in all; want 1", err, tr.count())
			}
		})
	}
}

// wordDetector is a Detector that knows a few Spanish words: a text with
// one is Spanish, else English; it is confident of texts of three words
// or more.
type wordDetector struct{}

func (wordDetector) Detect(text string, _ []string) (string, bool) {
	words := strings.Fields(strings.ToLower(text))
	if len(words) < 3 {
		return "", false
	}
	for _, w := range words {
		switch strings.Trim(w, ".,!?¿¡") {
		case "el", "despliegue", "terminó", "bien", "la", "casa":
			return "es", true
		}
	}
	return "en", true
}
