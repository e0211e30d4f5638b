package rooms_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messageview"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/translation"
)

func TestViewOfShowsTheTranslatorsTargetForTheReader(t *testing.T) {
	for _, tc := range []struct {
		reader string
		source string
		stored map[string]string // language -> translation
		want   string            // "" means the original
	}{
		// Amazon Translate's targets: es-AR is served es-MX, nb no, zh-HK zh-TW.
		{"es-AR", "ja", map[string]string{"es": "hola", "es-MX": "qué onda"}, "es-MX"},
		{"es-AR", "ja", map[string]string{"es": "hola"}, "es"},
		{"es-ES", "ja", map[string]string{"es": "hola", "es-MX": "qué onda"}, "es"},
		{"es-MX", "ja", map[string]string{"es": "hola", "es-MX": "qué onda"}, "es-MX"},
		{"nb", "ja", map[string]string{"no": "hei"}, "no"},
		{"nb-NO", "ja", map[string]string{"da": "hej", "no": "hei"}, "no"},
		{"fil", "ja", map[string]string{"tl": "kumusta"}, "tl"},
		{"zh-HK", "ja", map[string]string{"zh": "你好", "zh-TW": "妳好"}, "zh-TW"},
		{"zh-CN", "ja", map[string]string{"zh": "你好", "zh-TW": "妳好"}, "zh"},
		{"pt-BR", "ja", map[string]string{"pt": "olá", "pt-PT": "olá!"}, "pt"},
		{"pt-AO", "ja", map[string]string{"pt": "olá", "pt-PT": "olá!"}, "pt-PT"},
		{"en-GB", "ja", map[string]string{"en": "hi"}, "en"},
		{"fr-CA", "ja", map[string]string{"fr": "salut"}, "fr"},
		{"fr-BE", "ja", map[string]string{"fr-CA": "allô", "fr": "salut"}, "fr"},
		{"de-DE", "ja", map[string]string{"es": "hola", "fr": "salut"}, ""},
		{"ja", "ja", nil, ""},
		{"", "ja", map[string]string{"es": "hola"}, ""},
		// A reader the source language serves reads the original, not a
		// variant translated for other readers.
		{"zh-CN", "zh", map[string]string{"zh-TW": "妳好"}, ""},
		{"zh-HK", "zh", map[string]string{"zh-TW": "妳好"}, "zh-TW"},
		{"es-ES", "es", map[string]string{"es-MX": "qué onda"}, ""},
		{"es-AR", "es", map[string]string{"es-MX": "qué onda"}, "es-MX"},
		{"pt-BR", "pt", map[string]string{"pt-PT": "olá!"}, ""},
		{"pt-AO", "pt", map[string]string{"pt-PT": "olá!"}, "pt-PT"},
		{"fr-FR", "fr", map[string]string{"fr-CA": "allô"}, ""},
		{"fr-CA", "fr", map[string]string{"fr-CA": "allô"}, "fr-CA"},
		{"es-419", "es-AR", map[string]string{"es": "hola"}, ""},
		{"es-ES", "es-AR", map[string]string{"es": "hola"}, "es"},
		// Detection found the content was not in its source language: the
		// translation into that language is shown.
		{"en-US", "en", map[string]string{"en": "hello", "fr": "salut"}, "en"},
	} {
		m := chat.Message{ID: "M", Content: "original", SourceLanguage: tc.source}
		for lang := range tc.stored {
			m.TranslatedLanguages = append(m.TranslatedLanguages, lang)
		}
		v := rooms.ViewOf(m, contents(tc.stored), tc.reader)
		want := chat.MessageView{Message: m, Content: "original", Language: tc.source}
		if tc.want != "" {
			want = chat.MessageView{Message: m, Content: tc.stored[tc.want], Language: tc.want, Translated: true}
		}
		if !reflect.DeepEqual(v, want) {
			t.Errorf("reader %s, source %s, stored %v: got %q in %q translated=%v, want %q in %q translated=%v",
				tc.reader, tc.source, m.TranslatedLanguages, v.Content, v.Language, v.Translated, want.Content, want.Language, want.Translated)
		}
	}
}

func TestViewOfFallsBackToTheOriginal(t *testing.T) {
	m := chat.Message{ID: "M", Content: "hello", SourceLanguage: "en", TranslatedLanguages: []string{"es"}}
	trs := map[string]string{"es": "hola", "fr": "salut"}
	skip := m
	skip.SkipTranslation = true
	unrecorded := m
	unrecorded.TranslatedLanguages = nil
	for name, tc := range map[string]struct {
		m   chat.Message
		trs map[string]string
	}{
		"skip_translation":             {skip, trs},
		"translation not recorded":     {unrecorded, trs},
		"recorded translation missing": {m, map[string]string{"fr": "salut"}},
		"no translations read":         {m, nil},
		// A stored "translation" that is the original (a translation made
		// by an older version, or a too-long answer stored as the original)
		// is not shown as translated.
		"translation is the original": {m, map[string]string{"es": "hello"}},
	} {
		if v := rooms.ViewOf(tc.m, contents(tc.trs), "es-ES"); v.Translated || v.Content != "hello" || v.Language != "en" {
			t.Errorf("%s: shown as %+v, want the original", name, v)
		}
	}
}

// contents returns translations of the given contents by language.
func contents(byLang map[string]string) map[string]chat.Translation {
	if byLang == nil {
		return nil
	}
	out := make(map[string]chat.Translation, len(byLang))
	for l, c := range byLang {
		out[l] = chat.Translation{Language: l, Content: c}
	}
	return out
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
	v, err := p.Post(context.Background(), s, room, " hola \n", nil)
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
	if _, err := p.Post(context.Background(), s, room, "  ", nil); !chat.IsCode(err, chat.EValidation) || len(stored) != 0 {
		t.Fatalf("blank post: got %v with %d stored, want a validation error and nothing stored", err, len(stored))
	}
	p.Store = fakeWriter{put: func(context.Context, chat.Message) error { return chat.Unavailable(errors.New("down")) }}
	if _, err := p.Post(context.Background(), s, room, "hola", nil); !chat.IsCode(err, chat.EUnavailable) {
		t.Fatalf("failing store: got %v, want %s", err, chat.EUnavailable)
	}
}

type fakeReader struct {
	list         func(ctx context.Context, channelID, after string, limit int) (chat.Page[chat.Message], error)
	translations func(ctx context.Context, ids, langs []string) (map[string]map[string]chat.Translation, error)
}

func (f fakeReader) ListMessages(ctx context.Context, channelID, after string, limit int) (chat.Page[chat.Message], error) {
	return f.list(ctx, channelID, after, limit)
}

func (f fakeReader) Translations(ctx context.Context, ids, langs []string) (map[string]map[string]chat.Translation, error) {
	return f.translations(ctx, ids, langs)
}

func TestList(t *testing.T) {
	msgs := []chat.Message{
		{ID: "M5", Content: "five", SourceLanguage: "en", TranslatedLanguages: []string{"es-MX", "fr", "es"}},
		{ID: "M4", Content: "four", SourceLanguage: "en", TranslatedLanguages: []string{"es"}},
		{ID: "M3", Content: "three", SourceLanguage: "en", TranslatedLanguages: []string{"fr"}},
		{ID: "M2", Content: "dos", SourceLanguage: "es"},
		{ID: "M1", Content: "one", SourceLanguage: "en", SkipTranslation: true, TranslatedLanguages: []string{"es"}},
	}
	var gotIDs, gotLangs []string
	var gotChannel, gotAfter string
	var gotLimit int
	l := &rooms.Lister{Store: fakeReader{
		list: func(_ context.Context, ch, after string, limit int) (chat.Page[chat.Message], error) {
			gotChannel, gotAfter, gotLimit = ch, after, limit
			return chat.Page[chat.Message]{Items: msgs, After: []string{"MSG#M5", "MSG#M4", "MSG#M3", "MSG#M2", "MSG#M1"}, Next: "MSG#M1"}, nil
		},
		translations: func(_ context.Context, ids, langs []string) (map[string]map[string]chat.Translation, error) {
			gotIDs, gotLangs = ids, langs
			return map[string]map[string]chat.Translation{"M5": contents(map[string]string{"es-MX": "cinco"}),
				"M4": contents(map[string]string{"es": "cuatro"}), "M1": contents(map[string]string{"es": "uno"})}, nil
		},
	}}
	s := chat.GuestSession{Guest: chat.Guest{ID: "G1", PreferredLanguage: "es-AR"}}
	page, err := l.List(context.Background(), s, chat.Room{ID: roomA, ChannelID: "C1"}, "MSG#M9", 5)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if gotChannel != "C1" || gotAfter != "MSG#M9" || gotLimit != 5 {
		t.Fatalf("store asked for %s after %q limit %d, want C1 after MSG#M9 limit 5", gotChannel, gotAfter, gotLimit)
	}
	// One key per message with a translation for es-AR: none for M3 (only
	// French), M2 (none stored) or M1 (skip_translation).
	if fmt.Sprint(gotIDs) != "[M5 M4]" || fmt.Sprint(gotLangs) != "[es-MX es]" {
		t.Fatalf("translations asked for %v in %v, want [M5 M4] in [es-MX es]", gotIDs, gotLangs)
	}
	if page.Next != "MSG#M1" || len(page.Items) != 5 || fmt.Sprint(page.After) != "[MSG#M5 MSG#M4 MSG#M3 MSG#M2 MSG#M1]" {
		t.Fatalf("page next %q after %v with %d items, want MSG#M1, each message's position, 5 items", page.Next, page.After, len(page.Items))
	}
	var got []string
	for _, v := range page.Items {
		got = append(got, fmt.Sprintf("%s:%s:%s:%v", v.Message.ID, v.Content, v.Language, v.Translated))
	}
	if want := "[M5:cinco:es-MX:true M4:cuatro:es:true M3:three:en:false M2:dos:es:false M1:one:en:false]"; fmt.Sprint(got) != want {
		t.Fatalf("views %v, want %s", got, want)
	}
}

func TestListWithoutTranslationsForTheReaderReadsNone(t *testing.T) {
	l := &rooms.Lister{Store: fakeReader{
		list: func(context.Context, string, string, int) (chat.Page[chat.Message], error) {
			return chat.Page[chat.Message]{Items: []chat.Message{
				{ID: "M3", SkipTranslation: true, TranslatedLanguages: []string{"es"}},
				{ID: "M2", TranslatedLanguages: []string{"fr", "de"}},
				{ID: "M1"},
			}}, nil
		},
		translations: func(context.Context, []string, []string) (map[string]map[string]chat.Translation, error) {
			t.Fatalf("translations read for a page without a translation for the reader")
			return nil, nil
		},
	}}
	page, err := l.List(context.Background(), chat.GuestSession{Guest: chat.Guest{PreferredLanguage: "es"}}, chat.Room{}, "", 25)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(page.Items) != 3 {
		t.Fatalf("listed %d messages, want 3", len(page.Items))
	}
}

func TestListPassesStorageFailuresOn(t *testing.T) {
	down := chat.Unavailable(errors.New("down"))
	ok := func(context.Context, string, string, int) (chat.Page[chat.Message], error) {
		return chat.Page[chat.Message]{Items: []chat.Message{{ID: "M1", TranslatedLanguages: []string{"es"}}}}, nil
	}
	for name, store := range map[string]fakeReader{
		"query": {list: func(context.Context, string, string, int) (chat.Page[chat.Message], error) {
			return chat.Page[chat.Message]{}, down
		}},
		"translations": {list: ok, translations: func(context.Context, []string, []string) (map[string]map[string]chat.Translation, error) {
			return nil, down
		}},
	} {
		l := &rooms.Lister{Store: store}
		if _, err := l.List(context.Background(), chat.GuestSession{Guest: chat.Guest{PreferredLanguage: "es"}}, chat.Room{}, "", 25); !chat.IsCode(err, chat.EUnavailable) {
			t.Errorf("%s failing: got %v, want %s", name, err, chat.EUnavailable)
		}
	}
}

// TestViewOfAgreesWithTheTranslator simulates the translation function
// with Amazon Translate's regional codes over a channel whose readers read
// every tag below, then shows the message to each of them: a reader sees
// the translation the function made for them, and the original when their
// target was the source's (it is never translated into). Exact when the
// message's source language is one of the translator's codes; an author's
// tag the translator lacks ("fr-FR", "zh-HK") can tip a close tie.
func TestViewOfAgreesWithTheTranslator(t *testing.T) {
	langs := translation.NewLanguages("ar", "bs", "da", "de", "en", "es", "es-MX", "fa", "fa-AF", "fr", "fr-CA", "he", "hr", "ja",
		"no", "pt", "pt-PT", "sr", "sv", "tl", "zh", "zh-TW")
	readers := []string{"en", "en-US", "en-GB", "es", "es-ES", "es-AR", "es-MX", "es-419", "fr", "fr-FR", "fr-CA", "fr-BE", "fr-CH",
		"pt", "pt-BR", "pt-PT", "pt-AO", "zh", "zh-CN", "zh-TW", "zh-HK", "zh-Hant", "zh-SG", "zh-MO", "cmn", "yue", "nb", "nn", "no",
		"da", "sv", "fil", "tl", "iw", "he", "de", "de-CH", "gsw", "gl", "ca", "eu", "oc", "br", "sr-Latn", "sr", "sh", "hr", "bs",
		"fa", "fa-IR", "prs", "ja", "ko", "ar", "ar-EG"}
	for _, source := range langs.Codes() {
		served, _ := langs.Target(source)
		var stored []string
		trs := map[string]string{}
		for _, r := range readers {
			if target, ok := langs.Target(r); ok && target != served && trs[target] == "" {
				stored = append(stored, target)
				trs[target] = "in " + target
			}
		}
		m := chat.Message{ID: "M", Content: "original", SourceLanguage: source, TranslatedLanguages: stored}
		for _, r := range readers {
			want := "original"
			if target, ok := langs.Target(r); ok && target != served {
				want = "in " + target
			}
			if v := rooms.ViewOf(m, contents(trs), r); v.Content != want {
				t.Errorf("source %s, reader %s: reads %q, want %q", source, r, v.Content, want)
			}
		}
	}
}

// TestViewOfAltTexts: a reader reads the attachments' alt texts in their
// language, from the translation ViewOf picks for them, also when only an
// alt text was translated (translated, about the content, stays false); a
// translation whose alt texts are not one per attachment does not lend
// them.
func TestViewOfAltTexts(t *testing.T) {
	m := chat.Message{ID: "M", Content: "Click it", SourceLanguage: "en", TranslatedLanguages: []string{"es", "fr", "de", "it"},
		Attachments: []chat.Attachment{{ID: "U1", Filename: "button.png", AltText: "A red button next to config.yaml"}, {ID: "U2", Filename: "log.txt"}}}
	trs := map[string]chat.Translation{
		"es": {Language: "es", Content: "Haz clic", AltTexts: []string{"Un botón rojo junto a config.yaml", ""}},
		"fr": {Language: "fr", Content: "Click it", AltTexts: []string{"Un bouton rouge à côté de config.yaml", ""}},
		"de": {Language: "de", Content: "Klick", AltTexts: []string{"Ein roter Knopf"}},
		"it": {Language: "it", Content: "Click it", AltTexts: []string{"A red button next to config.yaml", ""}},
	}
	for _, tc := range []struct {
		reader     string
		content    string
		language   string
		alt        string // the first attachment's alt_text as rendered
		translated bool
	}{
		{"es-ES", "Haz clic", "es", "Un botón rojo junto a config.yaml", true},
		{"fr", "Click it", "en", "Un bouton rouge à côté de config.yaml", false},
		{"de", "Klick", "de", "A red button next to config.yaml", true},
		{"it", "Click it", "en", "A red button next to config.yaml", false},
		{"ja", "Click it", "en", "A red button next to config.yaml", false},
	} {
		v := rooms.ViewOf(m, trs, tc.reader)
		as := messageview.Renderer{}.Attachments(v)
		if v.Content != tc.content || v.Language != tc.language || v.Translated != tc.translated || len(as) != 2 ||
			as[0].AltText == nil || *as[0].AltText != tc.alt || *as[0].OriginalAltText != m.Attachments[0].AltText ||
			as[1].AltText != nil || as[1].OriginalAltText != nil {
			t.Errorf("%s: %q in %s translated=%v, attachments %+v; want %q in %s translated=%v, alt text %q",
				tc.reader, v.Content, v.Language, v.Translated, as, tc.content, tc.language, tc.translated, tc.alt)
		}
	}
}

// TestReadChannelCarriesAltTexts: a page read for a reader carries the
// alt texts of the translation it reads, in the one batch read.
func TestReadChannelCarriesAltTexts(t *testing.T) {
	m := chat.Message{ID: "M1", SourceLanguage: "en", TranslatedLanguages: []string{"es"},
		Attachments: []chat.Attachment{{ID: "U1", AltText: "Deploy log from https://ci.example.com/run/7"}}}
	reads := 0
	store := fakeReader{
		list: func(context.Context, string, string, int) (chat.Page[chat.Message], error) {
			return chat.Page[chat.Message]{Items: []chat.Message{m}}, nil
		},
		translations: func(_ context.Context, ids, langs []string) (map[string]map[string]chat.Translation, error) {
			reads++
			return map[string]map[string]chat.Translation{"M1": {"es": {Language: "es",
				AltTexts: []string{"Registro del despliegue de https://ci.example.com/run/7"}}}}, nil
		},
	}
	page, err := rooms.ReadChannel(context.Background(), store, "C1", "es-MX", "", 25)
	if err != nil {
		t.Fatal(err)
	}
	v := page.Items[0]
	if reads != 1 || v.Translated || v.Content != "" ||
		!reflect.DeepEqual(v.AltTexts, []string{"Registro del despliegue de https://ci.example.com/run/7"}) {
		t.Fatalf("%d reads; view %q in %s translated=%v alt texts %q; want one read, the Spanish alt text", reads, v.Content, v.Language, v.Translated, v.AltTexts)
	}
}

// ThreadRoot finds no thread: the tests of this file post roots.
func (f fakeWriter) ThreadRoot(context.Context, string, string) (string, error) {
	return "", chat.FieldError("thread_id", "unknown thread")
}
