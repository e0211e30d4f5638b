package rooms_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

func TestReaderLanguages(t *testing.T) {
	for _, tc := range []struct {
		tag  string
		want []string
	}{
		{"es", []string{"es"}},
		{"es-ES", []string{"es-ES", "es"}},
		{"es-MX", []string{"es-MX", "es"}},
		{"es-419", []string{"es-419", "es"}},
		{"fr-CA", []string{"fr-CA", "fr"}},
		{"pt-PT", []string{"pt-PT", "pt"}},
		{"en-US", []string{"en-US", "en"}},
		{"EN-us", []string{"EN-us", "en-US", "en"}},
		{"iw-IL", []string{"iw-IL", "he-IL", "he"}},
		{"tl", []string{"tl", "fil"}},
		{"zh", []string{"zh"}},
		{"zh-CN", []string{"zh-CN", "zh"}},
		{"zh-TW", []string{"zh-TW", "zh-Hant", "zh"}},
		{"zh-HK", []string{"zh-HK", "zh-Hant", "zh-TW", "zh"}},
		{"zh-Hant", []string{"zh-Hant", "zh-TW", "zh"}},
		{"zh-Hant-TW", []string{"zh-Hant-TW", "zh-TW", "zh-Hant", "zh"}},
		{"zh-Hans", []string{"zh-Hans", "zh"}},
		{"sr-Latn-RS", []string{"sr-Latn-RS", "sr-Latn", "sr"}},
		{"de-CH-1996", []string{"de-CH-1996", "de-CH", "de"}},
		{"en-US-x-private", []string{"en-US-x-private", "en-US", "en"}},
		{"nb-NO", []string{"nb-NO", "nb", "no"}},
		{"cmn-TW", []string{"cmn-TW", "cmn-Hant", "cmn", "zh"}},
		{"qaa", []string{"qaa"}},
		{"und", []string{"und"}},
		{"", nil},
		{"en_US", []string{"en-US", "en"}}, // not well-formed itself, but its canonical forms are
		{"es#x", nil},
	} {
		if got := rooms.ReaderLanguages(tc.tag); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ReaderLanguages(%q) = %q, want %q", tc.tag, got, tc.want)
		}
	}
}

func TestViewOfPicksTheFirstCandidateWithATranslation(t *testing.T) {
	m := chat.Message{ID: "M", Content: "hello", SourceLanguage: "en"}
	trs := map[string]string{"es": "hola", "es-MX": "qué onda", "fr": "salut"}
	for _, tc := range []struct {
		reader      string
		content     string
		lang        string
		translation bool
	}{
		{"es-MX", "qué onda", "es-MX", true},
		{"es-ES", "hola", "es", true},
		{"es", "hola", "es", true},
		{"fr-CA", "salut", "fr", true},
		{"de-DE", "hello", "en", false},
		{"en-US", "hello", "en", false},
	} {
		v := rooms.ViewOf(m, trs, rooms.ReaderLanguages(tc.reader))
		if v.Content != tc.content || v.Language != tc.lang || v.Translated != tc.translation || v.Message.ID != "M" {
			t.Errorf("reader %s: got %q %q translated=%v, want %q %q %v", tc.reader, v.Content, v.Language, v.Translated, tc.content, tc.lang, tc.translation)
		}
	}
	skip := m
	skip.SkipTranslation = true
	if v := rooms.ViewOf(skip, trs, []string{"es"}); v.Translated || v.Content != "hello" {
		t.Errorf("skip_translation message shown as %+v, want the original", v)
	}
}

func TestCheckContent(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"plain", "hola", ""},
		{"untrimmed is fine", "  indented\n", ""},
		{"max in multibyte characters", strings.Repeat("é", rooms.MaxContentLen), ""},
		{"empty", "", "The content field is required."},
		{"blank", " \t\n\u00a0", "The content field is required."},
		{"too long", strings.Repeat("a", rooms.MaxContentLen+1), "The content field must not be greater than 40000 characters."},
		{"too long in emoji", strings.Repeat("😀", rooms.MaxContentLen+1), "The content field must not be greater than 40000 characters."},
	} {
		if got := rooms.CheckContent(tc.content); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

type fakeWriter struct {
	put func(ctx context.Context, m chat.Message) error
}

func (f fakeWriter) PutMessage(ctx context.Context, m chat.Message) error { return f.put(ctx, m) }

func TestPost(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var stored []chat.Message
	p := &rooms.Poster{IDs: chat.NewIDs(), Now: func() time.Time { return now }, Store: fakeWriter{put: func(_ context.Context, m chat.Message) error {
		stored = append(stored, m)
		return nil
	}}}
	s := chat.GuestSession{Guest: chat.Guest{ID: "G1", RoomID: roomA, Nickname: "Ana", PreferredLanguage: "es-MX"}}
	room := chat.Room{ID: roomA, WorkspaceID: "W1", ChannelID: "C1"}
	v, err := p.Post(context.Background(), s, room, " hola \n")
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	if len(stored) != 1 {
		t.Fatalf("stored %d messages, want 1", len(stored))
	}
	m := stored[0]
	want := chat.Message{ID: m.ID, WorkspaceID: "W1", ChannelID: "C1",
		Author:  chat.Author{Type: chat.AuthorGuest, ID: "G1", Name: "Ana", Language: "es-MX"},
		Content: " hola \n", SourceLanguage: "es-MX", Status: chat.MessageQueued, CreatedAt: now}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("stored %+v, want %+v", m, want)
	}
	if !chat.ValidID(m.ID) {
		t.Fatalf("message id %q is not a ULID", m.ID)
	}
	if v.Message.ID != m.ID || v.Content != " hola \n" || v.Language != "es-MX" || v.Translated {
		t.Fatalf("view %+v, want the original in es-MX", v)
	}

	stored = nil
	if _, err := p.Post(context.Background(), s, room, "  "); !chat.IsCode(err, chat.EValidation) || len(stored) != 0 {
		t.Fatalf("blank post: got %v with %d stored, want a validation error and nothing stored", err, len(stored))
	}
	p.Store = fakeWriter{put: func(context.Context, chat.Message) error { return chat.Unavailable(errors.New("down")) }}
	if _, err := p.Post(context.Background(), s, room, "hola"); !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("failing store: got %v, want %s", err, chat.EUnavailable)
	}
}

type fakeReader struct {
	list         func(ctx context.Context, channelID, after string, limit int) (chat.Page[chat.Message], error)
	translations func(ctx context.Context, ids, langs []string) (map[string]map[string]string, error)
}

func (f fakeReader) ListMessages(ctx context.Context, channelID, after string, limit int) (chat.Page[chat.Message], error) {
	return f.list(ctx, channelID, after, limit)
}

func (f fakeReader) Translations(ctx context.Context, ids, langs []string) (map[string]map[string]string, error) {
	return f.translations(ctx, ids, langs)
}

func TestList(t *testing.T) {
	msgs := []chat.Message{
		{ID: "M3", Content: "three", SourceLanguage: "en"},
		{ID: "M2", Content: "dos", SourceLanguage: "es"},
		{ID: "M1", Content: "one", SourceLanguage: "en", SkipTranslation: true},
	}
	var gotIDs, gotLangs []string
	var gotChannel, gotAfter string
	var gotLimit int
	l := &rooms.Lister{Store: fakeReader{
		list: func(_ context.Context, ch, after string, limit int) (chat.Page[chat.Message], error) {
			gotChannel, gotAfter, gotLimit = ch, after, limit
			return chat.Page[chat.Message]{Items: msgs, Next: "MSG#M1"}, nil
		},
		translations: func(_ context.Context, ids, langs []string) (map[string]map[string]string, error) {
			gotIDs, gotLangs = ids, langs
			return map[string]map[string]string{"M3": {"es": "tres"}, "M1": {"es": "uno"}}, nil
		},
	}}
	s := chat.GuestSession{Guest: chat.Guest{ID: "G1", PreferredLanguage: "es-ES"}}
	page, err := l.List(context.Background(), s, chat.Room{ID: roomA, ChannelID: "C1"}, "MSG#M9", 3)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if gotChannel != "C1" || gotAfter != "MSG#M9" || gotLimit != 3 {
		t.Fatalf("store asked for %s after %q limit %d, want C1 after MSG#M9 limit 3", gotChannel, gotAfter, gotLimit)
	}
	if fmt.Sprint(gotIDs) != "[M3 M2]" || fmt.Sprint(gotLangs) != "[es-ES es]" {
		t.Fatalf("translations asked for %v in %v, want [M3 M2] (not the skip_translation one) in [es-ES es]", gotIDs, gotLangs)
	}
	if page.Next != "MSG#M1" || len(page.Items) != 3 {
		t.Fatalf("page next %q with %d items, want MSG#M1 with 3", page.Next, len(page.Items))
	}
	var got []string
	for _, v := range page.Items {
		got = append(got, fmt.Sprintf("%s:%s:%s:%v", v.Message.ID, v.Content, v.Language, v.Translated))
	}
	if want := "[M3:tres:es:true M2:dos:es:false M1:one:en:false]"; fmt.Sprint(got) != want {
		t.Fatalf("views %v, want %s", got, want)
	}
}

func TestListWithoutTranslatableMessagesReadsNoTranslations(t *testing.T) {
	l := &rooms.Lister{Store: fakeReader{
		list: func(context.Context, string, string, int) (chat.Page[chat.Message], error) {
			return chat.Page[chat.Message]{Items: []chat.Message{{ID: "M1", SkipTranslation: true}}}, nil
		},
		translations: func(context.Context, []string, []string) (map[string]map[string]string, error) {
			t.Fatalf("translations read for a page without translatable messages")
			return nil, nil
		},
	}}
	if _, err := l.List(context.Background(), chat.GuestSession{Guest: chat.Guest{PreferredLanguage: "es"}}, chat.Room{}, "", 25); err != nil {
		t.Fatalf("list: %v", err)
	}
}

func TestListPassesStorageFailuresOn(t *testing.T) {
	down := chat.Unavailable(errors.New("down"))
	ok := func(context.Context, string, string, int) (chat.Page[chat.Message], error) {
		return chat.Page[chat.Message]{Items: []chat.Message{{ID: "M1"}}}, nil
	}
	for name, store := range map[string]fakeReader{
		"query": {list: func(context.Context, string, string, int) (chat.Page[chat.Message], error) {
			return chat.Page[chat.Message]{}, down
		}},
		"translations": {list: ok, translations: func(context.Context, []string, []string) (map[string]map[string]string, error) {
			return nil, down
		}},
	} {
		l := &rooms.Lister{Store: store}
		if _, err := l.List(context.Background(), chat.GuestSession{Guest: chat.Guest{PreferredLanguage: "es"}}, chat.Room{}, "", 25); !chat.IsCode(err, chat.EUnavailable) {
			t.Errorf("%s failing: got %v, want %s", name, err, chat.EUnavailable)
		}
	}
}
