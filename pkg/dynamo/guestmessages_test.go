package dynamo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

// putTranslation writes a translation item as the translation function
// stores it: pk MSG#<message>, sk TR#<target>.
func (g *guestStack) putTranslation(t *testing.T, messageID, lang, content string) {
	t.Helper()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	_, err := g.st.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &g.st.Table, Item: map[string]types.AttributeValue{
		"pk": s("MSG#" + messageID), "sk": s("TR#" + lang), "message_id": s(messageID), "language": s(lang),
		"content": s(content), "source_language": s("en"), "created_at": s(time.Now().UTC().Format(time.RFC3339Nano)),
	}})
	if err != nil {
		t.Fatalf("put translation: %v", err)
	}
}

func (g *guestStack) session(t *testing.T, room chat.Room, token string) chat.GuestSession {
	t.Helper()
	s, _, err := g.auth(time.Now()).Authenticate(context.Background(), room.ID, token)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	return s
}

func TestPostThenListNewestFirstAgainstDynamo(t *testing.T) {
	g := newGuestStack(t)
	ctx := context.Background()
	room := g.room(t, time.Now().Add(time.Hour))
	ana := g.session(t, room, g.guest(t, room, "Ana", "es-MX", "").Token)
	poster := &rooms.Poster{Store: g.store, IDs: g.ids, Now: time.Now}
	lister := &rooms.Lister{Store: g.store.Rooms}

	var posted []string
	for i := 0; i < 5; i++ {
		g.st.Calls.Reset()
		v, err := poster.Post(ctx, ana, room, fmt.Sprintf("mensaje %d", i), nil)
		if err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
		if calls := g.st.Calls.Calls(); len(calls) != 1 || calls[0] != "DynamoDB.PutItem" {
			t.Fatalf("a post called %v, want one PutItem", calls)
		}
		posted = append(posted, v.Message.ID)
	}

	var listed []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatalf("more pages than expected")
		}
		g.st.Calls.Reset()
		page, err := lister.List(ctx, ana, room, after, 2)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		// Nothing is translated yet: no translation to read.
		if calls := g.st.Calls.Calls(); len(calls) != 1 || calls[0] != "DynamoDB.Query" {
			t.Fatalf("a page called %v, want one Query", calls)
		}
		for _, v := range page.Items {
			m := v.Message
			if m.ChannelID != room.ChannelID || m.WorkspaceID != room.WorkspaceID || m.Author.Type != chat.AuthorGuest ||
				m.Author.ID != ana.Guest.ID || m.Author.Name != "Ana" || m.SourceLanguage != "es-MX" || m.Status != chat.MessageQueued {
				t.Fatalf("listed %+v", m)
			}
			if v.Translated || v.Content != m.Content || v.Language != "es-MX" {
				t.Fatalf("view %+v, want the original", v)
			}
			listed = append(listed, m.ID)
		}
		if page.Next == "" {
			break
		}
		after = page.Next
	}
	want := []string{posted[4], posted[3], posted[2], posted[1], posted[0]}
	if fmt.Sprint(listed) != fmt.Sprint(want) {
		t.Fatalf("listed %v, want newest first %v", listed, want)
	}
}

func TestListIsTheRoomsChannelOnly(t *testing.T) {
	g := newGuestStack(t)
	ctx := context.Background()
	room, other := g.room(t, time.Now().Add(time.Hour)), g.room(t, time.Now().Add(time.Hour))
	ana := g.session(t, room, g.guest(t, room, "Ana", "en", "").Token)
	bo := g.session(t, other, g.guest(t, other, "Bo", "en", "").Token)
	poster := &rooms.Poster{Store: g.store, IDs: g.ids, Now: time.Now}
	if _, err := poster.Post(ctx, bo, other, "elsewhere", nil); err != nil {
		t.Fatal(err)
	}
	page, err := (&rooms.Lister{Store: g.store.Rooms}).List(ctx, ana, room, "", 25)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 0 || page.Next != "" {
		t.Fatalf("room lists %d messages of another channel", len(page.Items))
	}
}

// saveTranslations stores translations of message as the translation
// function does: the items, then the message's set of languages.
func (g *guestStack) saveTranslations(t *testing.T, room chat.Room, message string, byLang map[string]string) {
	t.Helper()
	var ts []chat.Translation
	for lang, content := range byLang {
		ts = append(ts, chat.Translation{MessageID: message, Language: lang, Content: content, SourceLanguage: "en", CreatedAt: time.Now()})
	}
	if err := g.store.Translation.SaveTranslations(context.Background(), room.ChannelID, message, ts, true); err != nil {
		t.Fatalf("save translations: %v", err)
	}
}

func TestTranslationsForReadersAgainstDynamo(t *testing.T) {
	g := newGuestStack(t)
	ctx := context.Background()
	room := g.room(t, time.Now().Add(time.Hour))
	ben := g.session(t, room, g.guest(t, room, "Ben", "en", "").Token)
	poster := &rooms.Poster{Store: g.store, IDs: g.ids, Now: time.Now}
	both, err := poster.Post(ctx, ben, room, "The build passed", nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := poster.Post(ctx, ben, room, "Deploying now", nil)
	if err != nil {
		t.Fatal(err)
	}
	// As Amazon Translate's targets would be stored: es and es-MX, pt and
	// pt-PT, zh and zh-TW, no.
	g.saveTranslations(t, room, both.Message.ID, map[string]string{
		"es": "La compilación pasó", "es-MX": "La build pasó, güey", "pt": "A build passou", "pt-PT": "A compilação passou",
		"zh": "构建通过", "zh-TW": "建置通過", "no": "Bygget gikk gjennom",
	})
	g.saveTranslations(t, room, plain.Message.ID, map[string]string{"es": "Desplegando ahora", "fr": "Déploiement en cours"})
	// A translation item the message does not record is not shown: the set,
	// not a guess, says what exists.
	g.putTranslation(t, plain.Message.ID, "de", "Wird bereitgestellt")

	for _, tc := range []struct {
		reader string
		want   string
		reads  bool // whether a translation is read
	}{
		{"es-ES", "Desplegando ahora (es) | La compilación pasó (es)", true},
		{"es-MX", "Desplegando ahora (es) | La build pasó, güey (es-MX)", true},
		{"es-AR", "Desplegando ahora (es) | La build pasó, güey (es-MX)", true},
		{"pt-BR", "Deploying now (en) | A build passou (pt)", true},
		{"pt-AO", "Deploying now (en) | A compilação passou (pt-PT)", true},
		{"zh-HK", "Deploying now (en) | 建置通過 (zh-TW)", true},
		{"nb", "Deploying now (en) | Bygget gikk gjennom (no)", true},
		{"fr-CA", "Déploiement en cours (fr) | The build passed (en)", true},
		{"de", "Deploying now (en) | The build passed (en)", false},
		{"en-GB", "Deploying now (en) | The build passed (en)", false},
	} {
		reader := g.session(t, room, g.guest(t, room, "Reader "+tc.reader, tc.reader, "").Token)
		g.st.Calls.Reset()
		page, err := (&rooms.Lister{Store: g.store.Rooms}).List(ctx, reader, room, "", 25)
		if err != nil {
			t.Fatalf("%s: list: %v", tc.reader, err)
		}
		want := []string{"DynamoDB.Query"}
		if tc.reads {
			want = append(want, "DynamoDB.BatchGetItem")
		}
		if calls := g.st.Calls.Calls(); fmt.Sprint(calls) != fmt.Sprint(want) {
			t.Errorf("%s: the list made %v, want %v", tc.reader, calls, want)
		}
		var got []string
		for _, v := range page.Items {
			got = append(got, fmt.Sprintf("%s (%s)", v.Content, v.Language))
			if v.Translated != (v.Content != v.Message.Content) {
				t.Errorf("%s: %q marked translated=%v", tc.reader, v.Content, v.Translated)
			}
		}
		if strings.Join(got, " | ") != tc.want {
			t.Errorf("%s reads %q, want %q", tc.reader, strings.Join(got, " | "), tc.want)
		}
	}
}

func TestTranslationsBatchesOfAHundredKeys(t *testing.T) {
	g := newGuestStack(t)
	var ids, langs []string
	for i := 0; i < 120; i++ {
		id := g.ids.New(time.Now())
		ids = append(ids, id)
		langs = append(langs, "es")
		if i%7 == 0 {
			g.putTranslation(t, id, "es", fmt.Sprint("hola ", i))
		}
		// The key asked for is the only one read.
		g.putTranslation(t, id, "fr", fmt.Sprint("salut ", i))
	}
	g.putTranslation(t, ids[119], "zh-TW", "你好")
	langs[119] = "zh-TW"
	// One pair repeated: 120 distinct keys.
	ids, langs = append(ids, ids[0]), append(langs, "es")
	g.st.Calls.Reset()
	got, err := g.store.Rooms.Translations(context.Background(), ids, langs)
	if err != nil {
		t.Fatalf("translations: %v", err)
	}
	if n := g.st.Calls.Total(); n != 2 {
		t.Fatalf("%d AWS calls %v for 120 keys, want 2 BatchGetItem", n, g.st.Calls.Calls())
	}
	n := 0
	for id, byLang := range got {
		for lang, tr := range byLang {
			text := tr.Content
			n++
			if lang == "zh-TW" && (id != ids[119] || text != "你好") {
				t.Errorf("%s in %s: %q", id, lang, text)
			}
			if lang == "fr" {
				t.Errorf("%s in fr was not asked for: %q", id, text)
			}
		}
	}
	// 0, 7, ..., 112 in es (17), and 119 in zh-TW.
	if n != 18 || got[ids[0]]["es"].Content != "hola 0" || got[ids[112]]["es"].Content != "hola 112" {
		t.Fatalf("got %d translations %v, want 18 with hola 0 and hola 112", n, got)
	}
	if _, ok := got[ids[1]]; ok {
		t.Fatalf("a message without translations is present: %v", got[ids[1]])
	}
	if _, err := g.store.Rooms.Translations(context.Background(), ids, langs[:3]); !chat.IsCode(err, chat.EInternal) {
		t.Fatalf("ids and languages of different lengths: got %v, want %s", err, chat.EInternal)
	}
}

func TestPutMessageRefusesADuplicateID(t *testing.T) {
	g := newGuestStack(t)
	m := chat.Message{ID: g.ids.New(time.Now()), WorkspaceID: g.ids.New(time.Now()), ChannelID: g.ids.New(time.Now()),
		Author: chat.Author{Type: chat.AuthorGuest, ID: "G", Name: "Ana"}, Content: "hi", SourceLanguage: "en",
		Status: chat.MessageQueued, CreatedAt: time.Now()}
	if err := g.store.PutMessage(context.Background(), m); err != nil {
		t.Fatalf("first put: %v", err)
	}
	m.Content = "overwritten"
	if err := g.store.PutMessage(context.Background(), m); !chat.IsCode(err, chat.EConflict) {
		t.Fatalf("second put: got %v, want %s", err, chat.EConflict)
	}
	page, err := g.store.Rooms.ListMessages(context.Background(), m.ChannelID, "", 25)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].Content != "hi" {
		t.Fatalf("channel holds %+v, want the first message unchanged", page.Items)
	}
}

func TestListMessagesRefusesAForeignPosition(t *testing.T) {
	g := newGuestStack(t)
	_, err := g.store.Rooms.ListMessages(context.Background(), g.ids.New(time.Now()), "READER#GUEST#X", 25)
	if !chat.IsCode(err, chat.EValidation) {
		t.Fatalf("got %v, want a cursor validation error", err)
	}
}
