package dynamo_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/translation"
)

// TestAltTextsRoundTripAgainstDynamo: the alt texts of a message that is
// only attachments are read with the message (one GetItem), translated,
// stored on the translation item in the one save, and read back by a
// reader's list in the one batch read, "" for an attachment left as it is.
func TestAltTextsRoundTripAgainstDynamo(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	ctx := context.Background()
	ids := chat.NewIDs()
	now := time.Now()
	channel := ids.New(now)
	seed(t, st, userReader(channel, ids.New(now), "en"), userReader(channel, ids.New(now), "es-ES"))
	m := chat.Message{ID: ids.New(now), WorkspaceID: ids.New(now), ChannelID: channel,
		Author: chat.Author{Type: chat.AuthorBot, Name: "CI Bot"}, SourceLanguage: "en", Status: chat.MessageQueued, CreatedAt: now,
		Attachments: []chat.Attachment{
			{ID: ids.New(now), Key: "k/1", Filename: "editor.png", ContentType: "image/png", Size: 10, AltText: "Screenshot of config.yaml in the editor"},
			{ID: ids.New(now), Key: "k/2", Filename: "log.txt", ContentType: "text/plain", Size: 20},
			{ID: ids.New(now), Key: "k/3", Filename: "arch.png", ContentType: "image/png", Size: 30, AltText: "Diagram of the system"},
		}}
	av, err := attributevalue.MarshalMap(dynamo.MessageItemOf(m))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &st.Table, Item: av}); err != nil {
		t.Fatal(err)
	}

	stored, err := store.Translation.Message(ctx, channel, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Screenshot of config.yaml in the editor", "", "Diagram of the system"}; stored.Content != "" || !reflect.DeepEqual(stored.AltTexts, want) {
		t.Fatalf("read content %q, alt texts %q; want none, %q", stored.Content, stored.AltTexts, want)
	}

	calls := 0
	svc := &translation.Service{Store: store.Translation, Translator: &countingTranslator{langs: translation.NewLanguages("en", "es"), calls: &calls}}
	st.Calls.Reset()
	if err := svc.Process(ctx, messages.JobOf(m)); err != nil {
		t.Fatalf("Process: %v", err)
	}
	if got, want := st.Calls.Calls(), []string{"DynamoDB.Query", "DynamoDB.GetItem", "DynamoDB.TransactWriteItems"}; !reflect.DeepEqual(got, want) || calls != 2 {
		t.Fatalf("made %v and %d translator calls, want %v and 2", got, calls, want)
	}

	st.Calls.Reset()
	page, err := rooms.ReadChannel(ctx, store.Rooms, channel, "es-ES", "", 25)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Calls.Calls(), []string{"DynamoDB.Query", "DynamoDB.BatchGetItem"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the list made %v, want %v", got, want)
	}
	v := page.Items[0]
	want := []string{"es: Screenshot of config.yaml in the editor", "", "es: Diagram of the system"}
	if v.Translated || v.Content != "" || !reflect.DeepEqual(v.AltTexts, want) {
		t.Fatalf("es reader: %q in %s translated=%v, alt texts %q; want %q", v.Content, v.Language, v.Translated, v.AltTexts, want)
	}
}

// TestAltTextsAtTheTranslationLimitAgainstDynamo: a translation whose
// content and ten alt texts fill MaxTranslationBytes, with characters of
// four bytes, is one item DynamoDB takes, and reads back whole; a
// translation item without alt texts reads as none.
func TestAltTextsAtTheTranslationLimitAgainstDynamo(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	ctx := context.Background()
	channel := chat.NewIDs().New(time.Now())
	msg, plain := putMessage(t, store, channel), putMessage(t, store, channel)
	alts := make([]string, 10)
	for i := range alts {
		alts[i] = strings.Repeat("😀", 1000) // 4,000 bytes each
	}
	content := strings.Repeat("a", translation.MaxTranslationBytes-10*4000)
	if err := store.Translation.SaveRevision(ctx, channel, msg, 1, []chat.Translation{{MessageID: msg, Language: "es", Content: content,
		SourceLanguage: "en", CreatedAt: time.Now(), AltTexts: alts}}, true); err != nil {
		t.Fatalf("save at the limit: %v", err)
	}
	if err := store.Translation.SaveRevision(ctx, channel, plain, 1, []chat.Translation{{MessageID: plain, Language: "es", Content: "Hola",
		SourceLanguage: "en", CreatedAt: time.Now()}}, true); err != nil {
		t.Fatalf("save without alt texts: %v", err)
	}
	got, err := store.Rooms.Translations(ctx, []string{msg, plain}, []string{"es", "es"})
	if err != nil {
		t.Fatal(err)
	}
	if tr := got[msg]["es"]; tr.Content != content || !reflect.DeepEqual(tr.AltTexts, alts) {
		t.Fatalf("read back %d bytes and %d alt texts, want %d and 10", len(tr.Content), len(tr.AltTexts), len(content))
	}
	if tr := got[plain]["es"]; tr.Content != "Hola" || tr.AltTexts != nil {
		t.Fatalf("without alt texts: %q, %q", tr.Content, tr.AltTexts)
	}
}
