package app_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chatbridge/chat/internal/apyserver"
	"github.com/chatbridge/chat/internal/chatcorpus"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/translation"
)

// callCounter is a translation.Observer that counts calls and characters.
type callCounter struct {
	mu           sync.Mutex
	calls, chars int
}

func (c *callCounter) Translated(_ context.Context, _ string, chars int, _ time.Duration, _ error) {
	c.mu.Lock()
	c.calls++
	c.chars += chars
	c.mu.Unlock()
}

func (c *callCounter) read() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, c.chars
}

// countingMemory counts what the translation memory answers.
type countingMemory struct {
	translation.Memory
	mu              sync.Mutex
	recalled, reads int
}

func (c *countingMemory) Recall(ctx context.Context, keys []translation.MemoryKey) (map[translation.MemoryKey]string, error) {
	m, err := c.Memory.Recall(ctx, keys)
	c.mu.Lock()
	c.recalled += len(m)
	c.reads += (len(keys) + 99) / 100
	c.mu.Unlock()
	return m, err
}

// structure counts what a translation must have as often as its original:
// line breaks, emphasis and strike markers, code ticks, table pipes,
// translators' mark characters, and the markers that start lines.
func structure(s string) map[string]int {
	out := map[string]int{}
	for _, m := range []string{"\n", "**", "~~", "`", "|", "*", "#", "@", "_", "[", "]", "(", ")"} {
		out[m] = strings.Count(s, m)
	}
	for _, line := range strings.Split(s, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		for _, p := range []string{"- ", "* ", "> ", "# ", "## ", "1. ", "- [ ] ", "- [x] "} {
			if strings.HasPrefix(trimmed, p) {
				out["line "+p]++
			}
		}
		out["indent "+fmt.Sprint(len(line)-len(trimmed))]++
	}
	return out
}

// corpusCase is the outcome of one corpus message.
type corpusCase struct {
	msg      chatcorpus.Message
	problems []string
}

// TestCorpusThroughApertium runs every message of the chat corpus
// (internal/chatcorpus) through the translation function as deployed
// (translating.Service: protection, detection, names, memory, budget) with
// a real apertium-apy, for the demo channel's readers (Ana es-ES, Ben
// en-US, Chloé fr-FR, which Debian's pairs do not serve), and holds every
// reader's view: each kept substring byte-identical and as often as in the
// original, the structure counted the same, no translator's markup, a
// translation exactly when there is something in another language, and
// the view equal to the stored translation. It prints the table by class
// that docs/translation.md shows:
//
//	go test -count=1 -run TestCorpusThroughApertium -v ./pkg/app/
func TestCorpusThroughApertium(t *testing.T) {
	ctx := context.Background()
	svc, st, d := apertiumService(t)
	counter := &callCounter{}
	svc.Observer = counter
	memory := &countingMemory{Memory: svc.Memory}
	svc.Memory = memory

	ws := d.Workspaces[0]
	users := map[string]chat.Author{}
	for _, u := range ws.Users {
		users[strings.ToLower(u.Name)] = chat.Author{Type: chat.AuthorUser, ID: u.ID, Name: u.Name, Language: u.PreferredLanguage}
	}
	var channel string
	for _, c := range ws.Channels {
		if c.Name == "general" {
			channel = c.ID
		}
	}
	store := storetest.New(st.DB, st.Table)
	ids := chat.NewIDs()

	type tally struct{ messages, passed, charsBefore, callsBefore, translated, chars, calls int }
	byClass := map[string]*tally{}
	var cases []corpusCase
	charsBefore, callsBefore := 0, 0
	for _, m := range chatcorpus.Messages() {
		author, ok := users[m.Author]
		if m.Author == "bot" {
			author, ok = chat.Author{Type: chat.AuthorBot, ID: "01JDZ8Y7K3Q4W5E6R7T8Y9A0BT", Name: "CI Bot", Language: ws.DefaultLanguage}, true
		}
		if !ok {
			t.Fatalf("%s: unknown author %q", m.ID, m.Author)
		}
		msg := chat.Message{ID: ids.New(time.Now()), WorkspaceID: ws.ID, ChannelID: channel, Author: author, Content: m.Content,
			SourceLanguage: author.Language, Status: chat.MessageQueued, CreatedAt: time.Now()}
		if err := store.PutMessage(ctx, msg); err != nil {
			t.Fatalf("%s: store: %v", m.ID, err)
		}
		calls0, chars0 := counter.read()
		if err := svc.Process(ctx, messages.JobOf(msg)); err != nil {
			t.Fatalf("%s: translate: %v", m.ID, err)
		}
		calls1, chars1 := counter.read()
		c := corpusCase{msg: m}
		// Before: the whole content sent once, to the language of the pair
		// from the author's (Apertium has es and en; fr has no pair).
		charsBefore += utf8.RuneCountInString(m.Content)
		callsBefore++
		tl := byClass[m.Class]
		if tl == nil {
			tl = &tally{}
			byClass[m.Class] = tl
		}
		tl.messages++
		tl.charsBefore += utf8.RuneCountInString(m.Content)
		tl.callsBefore++
		tl.calls += calls1 - calls0
		tl.chars += chars1 - chars0

		views := map[string]chat.MessageView{}
		for _, reader := range []string{"es-ES", "en-US", "fr-FR"} {
			page, err := rooms.ReadChannel(ctx, store.Rooms, channel, reader, "", 1)
			if err != nil || len(page.Items) != 1 || page.Items[0].Message.ID != msg.ID {
				t.Fatalf("%s: %s's list: %v %+v", m.ID, reader, err, page)
			}
			views[reader] = page.Items[0]
		}
		if v := views["fr-FR"]; v.Translated || v.Content != m.Content {
			c.problems = append(c.problems, "the fr reader (no pair) does not read the original")
		}
		if l := views["fr-FR"].Message.SourceLanguage; (m.Language == "en" || m.Language == "es") && !strings.HasPrefix(l, m.Language) &&
			(views["es-ES"].Translated || views["en-US"].Translated) {
			c.problems = append(c.problems, fmt.Sprintf("original_language %q, want the detected %s", l, m.Language))
		}
		for reader, lang := range map[string]string{"es-ES": "es", "en-US": "en"} {
			v := views[reader]
			stored, _ := storedTranslationItem(t, st.DB, st.Table, msg.ID, v.Language)
			wantTranslated := m.Language != "none" && m.Language != lang
			if m.Language == "mixed" {
				wantTranslated = true
			}
			switch {
			case wantTranslated && !v.Translated:
				c.problems = append(c.problems, lang+": not translated")
			case !wantTranslated && v.Translated:
				c.problems = append(c.problems, fmt.Sprintf("%s: translated though it should read as written: %q", lang, v.Content))
			}
			if v.Translated {
				tl.translated++
				if v.Content != stored {
					c.problems = append(c.problems, lang+": the view is not the stored translation")
				}
			} else if v.Content != m.Content {
				c.problems = append(c.problems, lang+": an untranslated view is not the original")
			}
			got := v.Content
			for _, k := range append(append([]string{}, m.Keep...), m.KeepIn[lang]...) {
				if strings.Count(got, k) < strings.Count(m.Content, k) {
					c.problems = append(c.problems, fmt.Sprintf("%s: lost %q in %q", lang, k, got))
				}
			}
			want, have := structure(m.Content), structure(got)
			for k, n := range want {
				if have[k] != n {
					c.problems = append(c.problems, fmt.Sprintf("%s: %q %d times, want %d, in %q", lang, k, have[k], n, got))
				}
			}
			if l := leaks.FindString(got); l != "" && !strings.Contains(m.Content, l) {
				c.problems = append(c.problems, fmt.Sprintf("%s: translator markup %q in %q", lang, l, got))
			}
		}
		if len(c.problems) == 0 {
			tl.passed++
		}
		cases = append(cases, c)
	}
	calls, chars := counter.read()

	classes := chatcorpus.Classes()
	var b strings.Builder
	fmt.Fprintf(&b, "\n| class | messages | pass | translations shown | characters before | characters sent | calls before | calls |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	total := &tally{}
	for _, cl := range classes {
		tl := byClass[cl]
		if tl == nil {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d |\n", cl, tl.messages, tl.passed, tl.translated, tl.charsBefore, tl.chars, tl.callsBefore, tl.calls)
		total.messages += tl.messages
		total.passed += tl.passed
		total.translated += tl.translated
		total.charsBefore += tl.charsBefore
		total.chars += tl.chars
		total.callsBefore += tl.callsBefore
		total.calls += tl.calls
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d | %d | %d | %d | %d |\n", total.messages, total.passed, total.translated,
		total.charsBefore, total.chars, total.callsBefore, total.calls)
	fmt.Fprintf(&b, "\nCharacters sent to the translator: %d before (every message whole, once to the other language), %d after.\n", charsBefore, chars)
	fmt.Fprintf(&b, "Translator calls: %d before (one a message), %d after (one per unit to send, none for units remembered or already in the reader's language).\n", callsBefore, calls)
	fmt.Fprintf(&b, "Units answered by the translation memory (not sent): %d, in %d BatchGetItem calls.\n", memory.recalled, memory.reads)
	t.Log(b.String())

	var failed []string
	for _, c := range cases {
		if len(c.problems) > 0 {
			failed = append(failed, fmt.Sprintf("%s (%s): %s", c.msg.ID, c.msg.Class, strings.Join(c.problems, "; ")))
		}
	}
	sort.Strings(failed)
	for _, f := range failed {
		t.Error(f)
	}
}

// demoWithApertium starts a real apertium-apy (skipping, said so, when
// it is not installed), stops it when the test ends, and returns the demo
// stack as TranslateFunction with the translation function's environment
// set to translate with it.
func demoWithApertium(t *testing.T) (*stacktest.Stack, *fixture.Document) {
	t.Helper()
	if err := apyserver.Missing(apyserver.DefaultModesDir, "eng-spa"); err != nil {
		t.Skipf("SKIPPED, NOT PASSED: no real apertium-apy with eng-spa: %v. `make test` installs it via scripts/ensure-test-tools.", err)
	}
	apy, err := apyserver.Start(context.Background(), 0, apyserver.DefaultModesDir)
	if err != nil {
		t.Fatalf("start apertium-apy: %v", err)
	}
	t.Cleanup(func() { apy.Stop() })
	st, d := wiringtest.DemoAs(t, translating.Function)
	t.Setenv(translating.EnvTranslator, translating.TranslatorApertium)
	t.Setenv(translating.EnvApertiumURL, apy.URL)
	return st, d
}

// apertiumService is demoWithApertium's translation service, as the
// translation function builds it.
func apertiumService(t *testing.T) (*translation.Service, *stacktest.Stack, *fixture.Document) {
	t.Helper()
	st, d := demoWithApertium(t)
	a, _, err := app.FromEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	svc, _, err := translating.Service(a)
	if err != nil {
		t.Fatal(err)
	}
	return svc, st, d
}
