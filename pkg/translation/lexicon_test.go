package translation_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/glossary"
	"github.com/chatbridge/chat/pkg/protect"
	"github.com/chatbridge/chat/pkg/translation"
)

// vocabStore is a VocabularyStore that counts its reads.
type vocabStore struct {
	names                                  protect.Names
	glossary                               glossary.Glossary
	nameReads, versionReads, glossaryReads int
}

func (v *vocabStore) WorkspaceNames(context.Context, string) (protect.Names, error) {
	v.nameReads++
	return v.names, nil
}

func (v *vocabStore) GlossaryVersion(context.Context, string) (string, error) {
	v.versionReads++
	return v.glossary.Version, nil
}

func (v *vocabStore) Glossary(context.Context, string) (glossary.Glossary, error) {
	v.glossaryReads++
	return v.glossary, nil
}

// TestCachedLexicon: names are read once per TTL; the glossary's version
// on every call, the glossary only when the version changed, so that a
// replaced glossary applies to the next message.
func TestCachedLexicon(t *testing.T) {
	st := &vocabStore{names: protect.Names{Members: []string{"Ana"}}, glossary: glossary.Glossary{Version: "v1", Keep: []string{"Go"}}}
	c := &clock{t: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	lex := &translation.CachedLexicon{Store: st, Now: c.now}
	ctx := context.Background()
	step := func(wantKeep []string, names, versions, glossaries int) {
		t.Helper()
		v, err := lex.Vocabulary(ctx, "W")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v.Glossary.Keep, wantKeep) || !reflect.DeepEqual(v.Names.Members, []string{"Ana"}) {
			t.Fatalf("vocabulary %+v, want keep %v", v, wantKeep)
		}
		if st.nameReads != names || st.versionReads != versions || st.glossaryReads != glossaries {
			t.Fatalf("reads: names %d, versions %d, glossaries %d; want %d, %d, %d",
				st.nameReads, st.versionReads, st.glossaryReads, names, versions, glossaries)
		}
	}
	step([]string{"Go"}, 1, 1, 1)
	step([]string{"Go"}, 1, 2, 1)
	st.glossary = glossary.Glossary{Version: "v2", Keep: []string{"Rust"}}
	step([]string{"Rust"}, 1, 3, 2)
	st.glossary = glossary.Glossary{}
	step(nil, 1, 4, 2)
	c.set(c.now().Add(translation.DefaultNamesTTL))
	step(nil, 2, 5, 2)
}
