package translation_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/translation"
)

// fakeBudgets is a BudgetStore with function fields; by default it keeps
// the spent characters per workspace and UTC day in memory and refuses a
// spend past the limit, as the adapter does, counting its calls.
type fakeBudgets struct {
	limit func(ws string) (int64, error)
	spend func(ws string, day time.Time, chars, limit int64) (bool, error)

	mu         sync.Mutex
	spent      map[string]int64 // by ws/2006-01-02
	limitCalls int
	spendCalls int
	spends     []int64 // the chars of each spend asked for
}

func (f *fakeBudgets) TranslationBudget(_ context.Context, ws string) (int64, error) {
	f.mu.Lock()
	f.limitCalls++
	f.mu.Unlock()
	return f.limit(ws)
}

func (f *fakeBudgets) SpendTranslationChars(_ context.Context, ws string, day time.Time, chars, limit int64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spendCalls++
	f.spends = append(f.spends, chars)
	if f.spend != nil {
		return f.spend(ws, day, chars, limit)
	}
	if day.Location() != time.UTC {
		return false, chat.Internal(errors.New("budget day not in UTC"))
	}
	k := ws + "/" + day.Format(time.DateOnly)
	if f.spent[k]+chars > limit {
		return false, nil
	}
	if f.spent == nil {
		f.spent = map[string]int64{}
	}
	f.spent[k] += chars
	return true, nil
}

// quiet discards the budget's log lines.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func limitOf(n int64) func(string) (int64, error) {
	return func(string) (int64, error) { return n, nil }
}

// clock is an injected clock the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// budgeted returns a service over store and a two-target translator (es,
// fr readers of an en message), charged against budgets, whose exceeded
// messages are recorded in *exceeded.
func budgeted(store *memStore, tr *fakeTranslator, budgets *fakeBudgets, c *clock, exceeded *[]int64) *translation.Service {
	b := &translation.Budget{Store: budgets, Log: quiet, Exceeded: func(_ context.Context, _ string, chars int64) {
		*exceeded = append(*exceeded, chars)
	}}
	return &translation.Service{Store: store, Translator: tr, Now: c.now, Budget: b}
}

// jobWith is jobIn("en") with content.
// TestBudgetEdges: "Hello world" is 11 characters; readers in es and fr
// make it 22 per message.
func TestBudgetEdges(t *testing.T) {
	day := time.Date(2026, 11, 22, 23, 59, 59, 999_999_999, time.UTC)
	for _, tc := range []struct {
		name         string
		limit        int64
		wantStored   []string
		wantExceeded []int64
	}{
		{"exactly at the budget: translated", 22, []string{"es", "fr"}, nil},
		{"one character over: untranslated", 21, nil, []int64{22}},
		{"budget zero: translation off", 0, nil, []int64{22}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &memStore{readers: readersIn(4, "en", "es", "fr")}
			tr := translatorOf("en", "es", "fr")
			budgets := &fakeBudgets{limit: limitOf(tc.limit)}
			var exceeded []int64
			svc := budgeted(store, tr, budgets, &clock{t: day}, &exceeded)
			if err := svc.Process(context.Background(), jobIn("en")); err != nil {
				t.Fatalf("Process: got %v, want nil (an untranslated message is delivered, not failed)", err)
			}
			if got := store.languages(messageID); !reflect.DeepEqual(got, tc.wantStored) {
				t.Fatalf("stored %v, want %v", got, tc.wantStored)
			}
			if tc.wantStored == nil && tr.count() != 0 {
				t.Fatalf("translator called %d times past the budget, want 0", tr.count())
			}
			if !reflect.DeepEqual(exceeded, tc.wantExceeded) {
				t.Fatalf("exceeded reports %v, want %v", exceeded, tc.wantExceeded)
			}
			if budgets.spendCalls > 1 || budgets.limitCalls != 1 {
				t.Fatalf("budget calls: %d spend, %d limit; want at most 1 and 1", budgets.spendCalls, budgets.limitCalls)
			}
		})
	}
}

// TestBudgetResetsAtMidnightUTC spends a day's budget to the character at
// 23:59:59 UTC; the next message is untranslated at 23:59:59.999999999 and
// translated (redelivered) at 00:00 UTC, with the limit read once a minute.
func TestBudgetResetsAtMidnightUTC(t *testing.T) {
	last := time.Date(2026, 11, 22, 23, 59, 59, 999_999_999, time.UTC)
	budgets := &fakeBudgets{limit: limitOf(22)}
	var exceeded []int64
	b := &translation.Budget{Store: budgets, Log: quiet, Exceeded: func(_ context.Context, _ string, chars int64) {
		exceeded = append(exceeded, chars)
	}}
	c := &clock{}
	ctx := context.Background()
	translated := func(at time.Time) bool {
		t.Helper()
		c.set(at)
		store := &memStore{readers: readersIn(4, "en", "es", "fr")}
		svc := &translation.Service{Store: store, Translator: translatorOf("en", "es", "fr"), Now: c.now, Budget: b}
		if err := svc.Process(ctx, jobIn("en")); err != nil {
			t.Fatalf("at %s: Process: %v", at.Format(time.RFC3339Nano), err)
		}
		return len(store.languages(messageID)) == 2
	}
	for i, s := range []struct {
		at   time.Time
		want bool
	}{
		{last.Add(-time.Second + 1), true},
		{last, false},
		{last.Add(time.Nanosecond), true}, // 00:00:00 UTC
		{last.Add(time.Nanosecond), false},
		// A clock in another zone does not move the day: 01:00 in UTC+2
		// is 23:00 UTC of the 23rd, whose budget is spent.
		{time.Date(2026, 11, 24, 1, 0, 0, 0, time.FixedZone("UTC+2", 2*3600)), false},
	} {
		if got := translated(s.at); got != s.want {
			t.Fatalf("step %d at %s: translated %v, want %v", i, s.at.Format(time.RFC3339Nano), got, s.want)
		}
	}
	if !reflect.DeepEqual(exceeded, []int64{22, 22, 22}) {
		t.Fatalf("exceeded reports %v, want three of 22", exceeded)
	}
	if budgets.limitCalls != 2 {
		// The cache's minute ends between 23:59:58 and the 23rd's 23:00.
		t.Fatalf("limit read %d times, want 2 (cached for a minute)", budgets.limitCalls)
	}
}

// TestBudgetCountsCharactersNotBytes charges the code points sent, per
// target: 39,999 characters of two-byte letters into es and fr spend
// 79,998, exactly the budget. The worst content (40,000 characters of
// emoji, U+FFFF, U+2028, '<') is all protected: it spends nothing and
// calls no translator.
func TestBudgetCountsCharactersNotBytes(t *testing.T) {
	content := strings.Repeat("añil ", 7_999) + "añil"
	// The job carries ids; the content comes from the stored message.
	store := &memStore{readers: readersIn(4, "en", "es", "fr"), content: content}
	tr := translatorOf("en", "es", "fr")
	budgets := &fakeBudgets{limit: limitOf(79_998)}
	var exceeded []int64
	svc := budgeted(store, tr, budgets, &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}, &exceeded)
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	if !reflect.DeepEqual(budgets.spends, []int64{79_998}) {
		t.Fatalf("spends %v, want one of 79998 (39,999 characters × 2 targets; %d bytes)", budgets.spends, len(content))
	}
	if got := store.languages(messageID); len(got) != 2 {
		t.Fatalf("stored %v, want es and fr (79,998 is exactly the budget)", got)
	}

	worst := &memStore{readers: readersIn(4, "en", "es", "fr"), content: strings.Repeat("😀\uffff\u2028<", 10_000)}
	budgets = &fakeBudgets{limit: limitOf(1)}
	tr = translatorOf("en", "es", "fr")
	if err := budgeted(worst, tr, budgets, &clock{t: time.Now()}, &exceeded).Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	if budgets.spendCalls+budgets.limitCalls+tr.count() != 0 || !worst.finished || len(exceeded) != 0 {
		t.Fatalf("protected content: %d spends, %d limit reads, %d translator calls, finished %v, exceeded %v; want none and finished",
			budgets.spendCalls, budgets.limitCalls, tr.count(), worst.finished, exceeded)
	}
}

// TestBudgetChargesOnlyWhatIsTranslated: nothing to translate spends
// nothing and reads no budget; a redelivery spends only the missing targets.
func TestBudgetChargesOnlyWhatIsTranslated(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	var exceeded []int64

	budgets := &fakeBudgets{limit: limitOf(1_000)}
	store := &memStore{readers: readersIn(4, "en", "en-GB")}
	if err := budgeted(store, translatorOf("en", "es"), budgets, c, &exceeded).Process(ctx, jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	if budgets.spendCalls+budgets.limitCalls != 0 {
		t.Fatalf("a message nobody needs translated made %d spend and %d limit calls, want none", budgets.spendCalls, budgets.limitCalls)
	}

	store = &memStore{readers: readersIn(4, "en", "es", "fr")}
	tr := translatorOf("en", "es", "fr")
	tr.translate = func(_ context.Context, text, _, target string) (translation.Result, error) {
		if target == "fr" && tr.count() < 3 {
			return translation.Result{}, chat.Unavailable(errors.New("fr down"))
		}
		return translation.Result{Text: target + ":" + text}, nil
	}
	svc := budgeted(store, tr, budgets, c, &exceeded)
	var failed *translation.FailedError
	if err := svc.Process(ctx, jobIn("en")); !errors.As(err, &failed) {
		t.Fatalf("Process: got %v, want a *FailedError for fr", err)
	}
	if err := svc.Process(ctx, jobIn("en")); err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	if !reflect.DeepEqual(budgets.spends, []int64{22, 11}) {
		t.Fatalf("spends %v, want 22 (es, fr) then 11 (fr again)", budgets.spends)
	}
}

// TestBudgetStoreErrorFailsTheMessage: a budget that cannot be read or
// spent is an error (the queue redelivers), and no translator is called.
func TestBudgetStoreErrorFailsTheMessage(t *testing.T) {
	down := chat.Unavailable(errors.New("table down"))
	for name, budgets := range map[string]*fakeBudgets{
		"limit": {limit: func(string) (int64, error) { return 0, down }},
		"spend": {limit: limitOf(1_000), spend: func(string, time.Time, int64, int64) (bool, error) { return false, down }},
	} {
		t.Run(name, func(t *testing.T) {
			store := &memStore{readers: readersIn(4, "en", "es")}
			tr := translatorOf("en", "es")
			var exceeded []int64
			svc := budgeted(store, tr, budgets, &clock{t: time.Now()}, &exceeded)
			err := svc.Process(context.Background(), jobIn("en"))
			if !errors.Is(err, down) {
				t.Fatalf("Process: got %v, want the store's error", err)
			}
			if tr.count() != 0 || len(exceeded) != 0 {
				t.Fatalf("translator calls %d, exceeded %v: want none", tr.count(), exceeded)
			}
		})
	}
}

// TestBudgetChargesOnlyWhatIsSent: units already in a reader's language
// and units the memory remembers are not sent, and not charged.
func TestBudgetChargesOnlyWhatIsSent(t *testing.T) {
	// Two sentences: an English one (16 characters sent per target) and
	// a Spanish one, which the es readers read as written.
	content := "The build is red. El despliegue terminó bien."
	store := &memStore{readers: readersIn(6, "en", "es", "fr"), content: content}
	tr := translatorOf("en", "es", "fr")
	budgets := &fakeBudgets{limit: limitOf(1_000)}
	var exceeded []int64
	svc := budgeted(store, tr, budgets, &clock{t: time.Now()}, &exceeded)
	svc.Detector = wordDetector{}
	if err := svc.Process(context.Background(), jobIn("en")); err != nil {
		t.Fatalf("Process: %v", err)
	}
	// es: "The build is red." (17); fr: both (17 + 28); en: "El despliegue terminó bien." (27).
	if want := []int64{17 + 17 + 27 + 27}; !reflect.DeepEqual(budgets.spends, want) {
		t.Fatalf("spends %v, want %v", budgets.spends, want)
	}
}
