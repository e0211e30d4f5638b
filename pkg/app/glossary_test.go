package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/translation"
)

type glossaryBody struct {
	Data struct {
		Keep  []string `json:"keep"`
		Fixed []struct {
			Term         string            `json:"term"`
			Translations map[string]string `json:"translations"`
		} `json:"fixed"`
		UpdatedAt *string `json:"updated_at"`
	} `json:"data"`
}

// TestGlossaryAPI: any user reads the glossary, an admin replaces it whole,
// audited; hostile terms are text; every limit at and past its edge is a
// 422 on the element, with nothing written; AWS calls counted.
func TestGlossaryAPI(t *testing.T) {
	w := newMemberWorld(t)
	ana, ben := bearer(w.ana), bearer(w.ben)
	path := w.wsPath("/glossary")

	var rec = w.do(t, "GET", path, "", ben)
	if calls := w.calls(t, "GET an empty glossary", func() { rec = w.do(t, "GET", path, "", ben) }); len(calls) > 2 {
		t.Errorf("GET made %v, want at most the token's GetItem and the glossary's", calls)
	}
	if g := decodeAs[glossaryBody](t, rec.Body.Bytes()); rec.Code != 200 || len(g.Data.Keep) != 0 || len(g.Data.Fixed) != 0 || g.Data.UpdatedAt != nil ||
		!strings.Contains(rec.Body.String(), `"keep":[]`) {
		t.Fatalf("empty glossary: %d %s", rec.Code, rec.Body)
	}
	if rec := w.do(t, "PUT", path, `{"keep":["x"]}`, ben); rec.Code != 403 {
		t.Fatalf("a member's PUT: %d %s, want 403", rec.Code, rec.Body)
	}

	body := `{"keep":["ChatBridge","C++",".*","a|b","(x)","🚀 launch","Ünïcödé"],` +
		`"fixed":[{"term":"on-call","translations":{"es":"de guardia","fr-CA":"de garde"}},{"term":"R&D","translations":{"es":"I+D <x>"}}]}`
	if calls := w.calls(t, "PUT a glossary", func() { rec = w.do(t, "PUT", path, body, ana) }); !reflect.DeepEqual(calls,
		[]string{"DynamoDB.GetItem", "DynamoDB.GetItem", "DynamoDB.TransactWriteItems"}) {
		t.Errorf("PUT made %v, want the token's GetItem, the old glossary's and one TransactWriteItems", calls)
	}
	if rec.Code != 200 {
		t.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	stored := rec.Body.String()
	rec = w.do(t, "GET", path, "", ben)
	if rec.Code != 200 || rec.Body.String() != stored {
		t.Fatalf("GET after PUT: %d %s, want %s", rec.Code, rec.Body, stored)
	}
	g := decodeAs[glossaryBody](t, rec.Body.Bytes())
	if len(g.Data.Keep) != 7 || g.Data.Keep[5] != "🚀 launch" || g.Data.Fixed[1].Translations["es"] != "I+D <x>" || g.Data.UpdatedAt == nil {
		t.Fatalf("stored %+v", g.Data)
	}
	audit := w.do(t, "GET", w.wsPath("/audit-events"), "", ana).Body.String()
	if !strings.Contains(audit, `"action":"glossary.updated"`) || !strings.Contains(audit, `"changes":["keep","fixed"]`) {
		t.Fatalf("audit trail %s, want glossary.updated with its changes", audit)
	}

	long := strings.Repeat("é", 100)
	for _, tc := range []struct {
		name, body, field string
	}{
		{"501 keep", `{"keep":[` + terms(501) + `]}`, "keep"},
		{"501 fixed", `{"fixed":[` + fixedTerms(501) + `]}`, "fixed"},
		{"empty term", `{"keep":[""]}`, "keep[0]"},
		{"101 characters", `{"keep":["` + long + `x"]}`, "keep[0]"},
		{"a control character", `{"keep":["a\u0007b"]}`, "keep[0]"},
		{"a line separator", `{"keep":["a\u2028b"]}`, "keep[0]"},
		{"a leading space", `{"keep":["ok"," padded"]}`, "keep[1]"},
		{"twice in keep", `{"keep":["Go","Go"]}`, "keep[1]"},
		{"in keep and fixed", `{"keep":["Go"],"fixed":[{"term":"Go","translations":{"es":"Ir"}}]}`, "fixed[0].term"},
		{"no translation", `{"fixed":[{"term":"Go","translations":{}}]}`, "fixed[0].translations"},
		{"not a language", `{"fixed":[{"term":"Go","translations":{"not a tag!":"x"}}]}`, "fixed[0].translations"},
		{"a 201-character rendering", `{"fixed":[{"term":"Go","translations":{"es":"` + strings.Repeat("x", 201) + `"}}]}`, "fixed[0].translations"},
		{"keep not an array", `{"keep":"Go"}`, "keep"},
		{"keep of numbers", `{"keep":[1,2]}`, "keep"},
		{"a fixed entry not an object", `{"fixed":["Go"]}`, "fixed"},
		{"a term not a string", `{"fixed":[{"term":7,"translations":{"es":"x"}}]}`, "fixed"},
	} {
		rec := w.do(t, "PUT", path, tc.body, ana)
		var e struct {
			Errors map[string][]string `json:"errors"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != 422 || len(e.Errors[tc.field]) == 0 {
			t.Errorf("%s: %d %s, want 422 on %s", tc.name, rec.Code, rec.Body, tc.field)
		}
	}
	for _, tc := range []struct {
		name, body string
		code       int
	}{
		{"not JSON", `{"keep":`, 400},
		{"past 256 KiB", `{"keep":["` + strings.Repeat("a", 256<<10) + `"]}`, 413},
	} {
		if rec := w.do(t, "PUT", path, tc.body, ana); rec.Code != tc.code {
			t.Errorf("%s: %d %.200s, want %d", tc.name, rec.Code, rec.Body, tc.code)
		}
	}
	if rec := w.do(t, "GET", path, "", ben); rec.Body.String() != stored {
		t.Fatalf("after the refused PUTs: %s, want the glossary unchanged", rec.Body)
	}

	// At the limits: 500 keep and 500 fixed terms of 100 characters.
	rec = w.do(t, "PUT", path, `{"keep":[`+terms(500)+`],"fixed":[`+fixedTerms(500)+`]}`, ana)
	if g := decodeAs[glossaryBody](t, rec.Body.Bytes()); rec.Code != 200 || len(g.Data.Keep) != 500 || len(g.Data.Fixed) != 500 {
		t.Fatalf("500 + 500 terms: %d %.300s", rec.Code, rec.Body)
	}

	// Twenty admins' PUTs at once: every one answered 200, and what is
	// stored is one of them, whole.
	var wg sync.WaitGroup
	codes := make([]int, 20)
	for i := range codes {
		wg.Go(func() {
			codes[i] = w.serveCode(t, "PUT", path, fmt.Sprintf(`{"keep":["k%d-a","k%d-b"],"fixed":[{"term":"f%d","translations":{"es":"e%d"}}]}`, i, i, i, i), ana)
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Fatalf("concurrent PUT %d: %d", i, c)
		}
	}
	g = decodeAs[glossaryBody](t, w.do(t, "GET", path, "", ben).Body.Bytes())
	var n int
	if _, err := fmt.Sscanf(g.Data.Keep[0], "k%d-a", &n); err != nil || !reflect.DeepEqual(g.Data.Keep, []string{fmt.Sprintf("k%d-a", n), fmt.Sprintf("k%d-b", n)}) ||
		g.Data.Fixed[0].Term != fmt.Sprintf("f%d", n) {
		t.Fatalf("after concurrent PUTs: %+v, want one of them whole", g.Data)
	}
}

func terms(n int) string {
	out := make([]string, n)
	for i := range out {
		s := fmt.Sprintf("term%04d", i)
		out[i] = `"` + s + strings.Repeat("x", 100-len(s)) + `"`
	}
	return strings.Join(out, ",")
}

func fixedTerms(n int) string {
	out := make([]string, n)
	for i := range out {
		s := fmt.Sprintf("fixed%04d", i)
		out[i] = fmt.Sprintf(`{"term":"%s","translations":{"es":"%s"}}`, s+strings.Repeat("y", 100-len(s)), strings.Repeat("z", 100))
	}
	return strings.Join(out, ",")
}

// TestGlossaryAppliesToTheNextTranslation: a glossary replaced through the
// API applies to the next message the translation function processes, as
// deployed (its Lexicon reads the glossary's version every message): keep
// terms and the workspace's names are never sent, a fixed term is rendered
// for the Spanish reader.
func TestGlossaryAppliesToTheNextTranslation(t *testing.T) {
	w := newMemberWorld(t)
	t.Setenv(translating.EnvTranslator, translating.TranslatorApertium)
	t.Setenv(translating.EnvApertiumURL, "http://127.0.0.1:9") // replaced below: no call reaches it
	svc, _, err := translating.Service(w.app.For(translating.Function))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sent []string
	svc.Translator = upperTranslator{sent: func(s string) { mu.Lock(); sent = append(sent, s); mu.Unlock() }}
	translate := func(content string) string {
		t.Helper()
		id := w.post(t, bearer(w.ben), content)
		m := chat.Message{ID: id, WorkspaceID: w.ws.ID, ChannelID: w.general, SourceLanguage: "en", Content: content, CreatedAt: time.Now()}
		if err := svc.Process(context.Background(), messages.JobOf(m)); err != nil {
			t.Fatal(err)
		}
		return w.listed(t, bearer(w.ana), id).Content
	}
	before := translate("The on-call team moved Cloud Run to the general channel")
	if rec := w.do(t, "PUT", w.wsPath("/glossary"), `{"keep":["Cloud Run"],"fixed":[{"term":"on-call","translations":{"es":"de guardia"}}]}`, bearer(w.ana)); rec.Code != 200 {
		t.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	mu.Lock()
	sent = nil
	mu.Unlock()
	after := translate("The on-call team moved Cloud Run to the general channel")
	if want := "THE de guardia TEAM MOVED Cloud Run TO THE general CHANNEL"; after != want {
		t.Fatalf("after the PUT: %q, want %q (before it: %q)", after, want, before)
	}
	for _, s := range sent {
		if strings.Contains(s, "Cloud") || strings.Contains(s, "on-call") || strings.Contains(s, "general") {
			t.Errorf("sent %q: a glossary term or a channel's name reached the translator", s)
		}
	}
}

// upperTranslator upper-cases what it is sent, placeholders aside, for any
// pair between en and es.
type upperTranslator struct{ sent func(string) }

func (upperTranslator) Targets(context.Context, string) (*translation.Languages, error) {
	return translation.NewLanguages("en", "es"), nil
}

func (u upperTranslator) Translate(_ context.Context, text, _, _ string) (translation.Result, error) {
	u.sent(text)
	var b strings.Builder
	inTag := false
	for _, r := range text {
		switch {
		case r == '<':
			inTag = true
		case r == '>':
			inTag = false
			b.WriteRune(r)
			continue
		}
		if inTag {
			b.WriteRune(r)
		} else {
			b.WriteString(strings.ToUpper(string(r)))
		}
	}
	return translation.Result{Text: b.String()}, nil
}
