package app_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/glossary"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/translation"
)

// leaks are what a translator's markup looks like in a reader's text.
var leaks = regexp.MustCompile(`<b\b|</b>|id="p\d|<span|&lt;|&gt;|&amp;|&#\d+;|&quot;`)

// staticLexicon gives every workspace one vocabulary.
type staticLexicon struct{ v translation.Vocabulary }

func (s staticLexicon) Vocabulary(context.Context, string) (translation.Vocabulary, error) {
	return s.v, nil
}

// TestHostileTranslationThroughApertium: the worst content a chat sees,
// with a glossary of 500 keep and 500 fixed terms that overlap each other
// and the protected spans (regular-expression metacharacters, emoji,
// markup in a rendering), through the translation function and a real
// apertium-apy: no error, nothing protected lost, no translator's markup
// in any reader's view.
func TestHostileTranslationThroughApertium(t *testing.T) {
	ctx := context.Background()
	svc, st, d := apertiumService(t)
	g := glossary.Glossary{Version: "hostile"}
	metas := []string{".*", "a|b", "(x)", "[x]", "C++", "^$", `\d+`, "🚀 launch", "x{2}", "?"}
	g.Keep = append(g.Keep, metas...)
	for i := 0; len(g.Keep) < 500; i++ {
		switch {
		case i%3 == 0:
			g.Keep = append(g.Keep, fmt.Sprintf("build %d", i)) // overlaps "build" in text and numbers
		default:
			g.Keep = append(g.Keep, fmt.Sprintf("term%d team", i))
		}
	}
	for i := 0; len(g.Fixed) < 500; i++ {
		term := fmt.Sprintf("widget%d", i)
		if i == 0 {
			term = "on-call"
		}
		g.Fixed = append(g.Fixed, glossary.Fixed{Term: term, Translations: map[string]string{"es": fmt.Sprintf("artilugio <%d> & co", i)}})
	}
	g.Fixed = append(g.Fixed[:499], glossary.Fixed{Term: "team", Translations: map[string]string{"es": "equipo*"}})
	svc.Lexicon = staticLexicon{translation.Vocabulary{Glossary: g}}

	ws := d.Workspaces[0]
	var channel string
	for _, c := range ws.Channels {
		if c.Name == "general" {
			channel = c.ID
		}
	}
	ben := ws.Users[1]
	store := storetest.New(st.DB, st.Table)
	ids := chat.NewIDs()
	longLink := "https://docs.example.invalid/" + strings.Repeat("a", 2000)
	for name, tc := range map[string]struct {
		content string
		keep    []string
	}{
		"40,000 backticks":       {strings.Repeat("`", 40000), nil},
		"a 2,000-character link": {"Read [the report](" + longLink + ") before the meeting", []string{"](" + longLink + ")"}},
		"nested fences":          {"Look at this:\n\n````md\n```go\nfunc main() {}\n```\n````\n\nand tell me", []string{"````md\n```go\nfunc main() {}\n```\n````"}},
		"an unclosed fence":      {"The fix is below\n\n```python\nprint('the house')\nno end here", []string{"```python\nprint('the house')\nno end here"}},
		"1,000 mentions":         {strings.Repeat("@ana ", 1000) + "please review the house", []string{strings.Repeat("@ana ", 999) + "@ana"}},
		"glossary terms everywhere": {"The term1 team and the on-call team use C++ and .* with 🚀 launch in build 3 at `widget1`",
			[]string{"term1 team", "C++", ".*", "🚀 launch", "build 3", "`widget1`"}},
		"markers as text": {`Type <b id="p1"/> and &amp; and *stars* and #hash and @ at the end`, []string{`<b id="p1"/>`, "&amp;", "#hash", " @ "}},
	} {
		msg := chat.Message{ID: ids.New(time.Now()), WorkspaceID: ws.ID, ChannelID: channel,
			Author:  chat.Author{Type: chat.AuthorUser, ID: ben.ID, Name: ben.Name, Language: ben.PreferredLanguage},
			Content: tc.content, SourceLanguage: ben.PreferredLanguage, Status: chat.MessageQueued, CreatedAt: time.Now()}
		if err := store.PutMessage(ctx, msg); err != nil {
			t.Fatalf("%s: store: %v", name, err)
		}
		if err := svc.Process(ctx, messages.JobOf(msg)); err != nil {
			t.Errorf("%s: translate: %v", name, err)
			continue
		}
		page, err := rooms.ReadChannel(ctx, store.Rooms, channel, "es-ES", "", 1)
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("%s: list: %v", name, err)
		}
		v := page.Items[0]
		for _, k := range tc.keep {
			if !strings.Contains(v.Content, k) {
				t.Errorf("%s: lost %.80q in %.200q", name, k, v.Content)
			}
		}
		if l := leaks.FindString(v.Content); l != "" && !strings.Contains(tc.content, l) {
			t.Errorf("%s: translator markup %q in %.200q", name, l, v.Content)
		}
		if name == "glossary terms everywhere" && (!strings.Contains(v.Content, "artilugio <0> & co") || !strings.Contains(v.Content, "equipo*")) {
			t.Errorf("%s: fixed renderings missing in %q", name, v.Content)
		}
		t.Logf("%s: translated %v, %d bytes: %.160q", name, v.Translated, len(v.Content), v.Content)
	}
}
