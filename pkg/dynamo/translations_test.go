package dynamo_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/translation"
)

// seed writes items as they are, straight to the table.
func seed(t *testing.T, st *stacktest.Stack, items ...map[string]any) {
	t.Helper()
	for _, it := range items {
		av, err := attributevalue.MarshalMap(it)
		if err != nil {
			t.Fatalf("marshal %v: %v", it, err)
		}
		if _, err := st.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &st.Table, Item: av}); err != nil {
			t.Fatalf("put %v: %v", it["sk"], err)
		}
	}
}

func userReader(channel, id, lang string) map[string]any {
	return map[string]any{"pk": "CHAN#" + channel, "sk": "READER#USER#" + id, "kind": "user", "id": id, "language": lang}
}

func guestReader(channel, room, id, lang string) map[string]any {
	return map[string]any{"pk": "CHAN#" + channel, "sk": "READER#GUEST#" + id, "kind": "guest", "id": id,
		"language": lang, "room_id": room, "ttl": time.Now().Add(48 * time.Hour).Unix()}
}

func channelRoom(channel, room, status string, expires time.Time) map[string]any {
	return map[string]any{"pk": "CHAN#" + channel, "sk": "ROOM#" + room, "kind": "room", "id": room,
		"status": status, "expires_epoch": expires.Unix()}
}

func sortedReaders(rs []translation.Reader) []translation.Reader {
	sort.Slice(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID })
	return rs
}

func TestReadersOfAChannel(t *testing.T) {
	st := stacktest.New(t)
	store := dynamo.New(st.DB, st.Table)
	ids := chat.NewIDs()
	now := time.Now()
	id := func() string { return ids.New(now) }
	channel, other := id(), id()
	active, closed, expired, unlisted := id(), id(), id(), id()
	ana, bo, cy, di, ed, fi, gu := id(), id(), id(), id(), id(), id(), id()
	seed(t, st,
		userReader(channel, ana, "es-ES"),
		userReader(channel, bo, "en"),
		guestReader(channel, active, cy, "fr"),
		guestReader(channel, closed, di, "de"),
		guestReader(channel, expired, ed, "ja"),
		guestReader(channel, unlisted, fi, "ko"),
		channelRoom(channel, active, chat.RoomActive, now.Add(time.Hour)),
		channelRoom(channel, closed, chat.RoomClosed, now.Add(time.Hour)),
		channelRoom(channel, expired, chat.RoomActive, now.Add(-time.Minute)),
		// Neither a message of the channel nor a reader of another channel
		// is a reader.
		map[string]any{"pk": "CHAN#" + channel, "sk": "MSG#" + id(), "content": "hi", "language": "it"},
		userReader(other, gu, "pt"),
	)

	st.Calls.Reset()
	got, err := store.Readers(context.Background(), channel, now)
	if err != nil {
		t.Fatalf("Readers: %v", err)
	}
	if calls := st.Calls.Calls(); !reflect.DeepEqual(calls, []string{"DynamoDB.Query"}) {
		t.Fatalf("Readers made %v, want one DynamoDB.Query", calls)
	}
	want := sortedReaders([]translation.Reader{
		{Kind: chat.AuthorUser, ID: ana, Language: "es-ES"},
		{Kind: chat.AuthorUser, ID: bo, Language: "en"},
		{Kind: chat.AuthorGuest, ID: cy, Language: "fr"},
	})
	if got = sortedReaders(got); !reflect.DeepEqual(got, want) {
		t.Fatalf("Readers:\ngot  %+v\nwant %+v", got, want)
	}

	// The same room read an hour and a minute later has expired.
	got, err = store.Readers(context.Background(), channel, now.Add(61*time.Minute))
	if err != nil {
		t.Fatalf("Readers later: %v", err)
	}
	for _, r := range got {
		if r.Kind == chat.AuthorGuest {
			t.Fatalf("Readers after the room expired still lists guest %+v", r)
		}
	}
}

func TestReadersPaginates(t *testing.T) {
	st := stacktest.New(t)
	store := dynamo.New(st.DB, st.Table)
	ids := chat.NewIDs()
	channel := ids.New(time.Now())
	// Five 300 KB readers exceed one 1 MB Query page.
	pad := strings.Repeat("x", 300<<10)
	var want []string
	for i := 0; i < 5; i++ {
		u := ids.New(time.Now())
		it := userReader(channel, u, "en")
		it["pad"] = pad
		seed(t, st, it)
		want = append(want, u)
	}
	st.Calls.Reset()
	got, err := store.Readers(context.Background(), channel, time.Now())
	if err != nil {
		t.Fatalf("Readers: %v", err)
	}
	var gotIDs []string
	for _, r := range got {
		gotIDs = append(gotIDs, r.ID)
	}
	sort.Strings(gotIDs)
	if !reflect.DeepEqual(gotIDs, want) {
		t.Fatalf("Readers: got %d readers %v, want %d", len(gotIDs), gotIDs, len(want))
	}
	if n := st.Calls.Total(); n < 2 {
		t.Fatalf("1.5 MB of readers came in %d Query page(s), want at least 2: pagination not exercised", n)
	}
}

func TestSaveAndListTranslations(t *testing.T) {
	st := stacktest.New(t)
	store := dynamo.New(st.DB, st.Table)
	ids := chat.NewIDs()
	ctx := context.Background()
	msg, other := ids.New(time.Now()), ids.New(time.Now())
	created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

	// 30 languages: two BatchWriteItem calls of at most 25.
	var ts []chat.Translation
	var want []string
	for i := 0; i < 30; i++ {
		lang := fmt.Sprintf("x%02d", i)
		if i == 0 {
			lang = "es-MX"
		}
		ts = append(ts, chat.Translation{MessageID: msg, Language: lang, Content: "Hola " + lang, SourceLanguage: "en", CreatedAt: created})
		want = append(want, lang)
	}
	sort.Strings(want)
	st.Calls.Reset()
	if err := store.SaveTranslations(ctx, ts); err != nil {
		t.Fatalf("SaveTranslations: %v", err)
	}
	if calls := st.Calls.Calls(); !reflect.DeepEqual(calls, []string{"DynamoDB.BatchWriteItem", "DynamoDB.BatchWriteItem"}) {
		t.Fatalf("SaveTranslations of 30 made %v, want two BatchWriteItem", calls)
	}
	if err := store.SaveTranslations(ctx, []chat.Translation{{MessageID: other, Language: "fr", Content: "Salut", CreatedAt: created}}); err != nil {
		t.Fatalf("SaveTranslations: %v", err)
	}

	st.Calls.Reset()
	done, err := store.TranslatedLanguages(ctx, msg)
	if err != nil {
		t.Fatalf("TranslatedLanguages: %v", err)
	}
	if calls := st.Calls.Calls(); !reflect.DeepEqual(calls, []string{"DynamoDB.Query"}) {
		t.Fatalf("TranslatedLanguages made %v, want one Query", calls)
	}
	var got []string
	for l, ok := range done {
		if ok {
			got = append(got, l)
		}
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TranslatedLanguages: got %v, want %v", got, want)
	}

	// The item is the data model's: pk MSG#<m>, sk TR#<language>.
	out, err := st.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.Table, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "MSG#" + msg}, "sk": &types.AttributeValueMemberS{Value: "TR#es-MX"},
	}, ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item == nil {
		t.Fatalf("get translation item: %v, item %v", err, out.Item)
	}
	var item struct {
		MessageID      string    `dynamodbav:"message_id"`
		Language       string    `dynamodbav:"language"`
		Content        string    `dynamodbav:"content"`
		SourceLanguage string    `dynamodbav:"source_language"`
		CreatedAt      time.Time `dynamodbav:"created_at"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &item); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	if item.MessageID != msg || item.Language != "es-MX" || item.Content != "Hola es-MX" || item.SourceLanguage != "en" || !item.CreatedAt.Equal(created) {
		t.Fatalf("stored item %+v", item)
	}

	none, err := store.TranslatedLanguages(ctx, ids.New(time.Now()))
	if err != nil || len(none) != 0 {
		t.Fatalf("TranslatedLanguages of an untranslated message: %v, %v; want none", none, err)
	}
}

// TestTranslationServiceAgainstDynamo runs the whole fan-out on the real
// store: three calls for a first delivery, two and no translation for a
// redelivery.
func TestTranslationServiceAgainstDynamo(t *testing.T) {
	st := stacktest.New(t)
	store := dynamo.New(st.DB, st.Table)
	ids := chat.NewIDs()
	now := time.Now()
	channel, room, msg := ids.New(now), ids.New(now), ids.New(now)
	seed(t, st, channelRoom(channel, room, chat.RoomActive, now.Add(time.Hour)))
	langs := []string{"en", "en-GB", "es-ES", "es-MX"}
	for i := 0; i < 8; i++ {
		if i%2 == 0 {
			seed(t, st, userReader(channel, ids.New(now), langs[i%len(langs)]))
		} else {
			seed(t, st, guestReader(channel, room, ids.New(now), langs[i%len(langs)]))
		}
	}
	calls := 0
	tr := &countingTranslator{langs: translation.NewLanguages("en", "es"), calls: &calls}
	svc := &translation.Service{Store: store, Translator: tr}
	job := messages.Job{MessageID: msg, ChannelID: channel, Content: "Hello", SourceLanguage: "en", CreatedAt: now}

	st.Calls.Reset()
	if err := svc.Process(context.Background(), job); err != nil {
		t.Fatalf("Process: %v", err)
	}
	if calls != 1 {
		t.Fatalf("8 readers in 2 languages: %d translator calls, want 1", calls)
	}
	if got, want := st.Calls.Calls(), []string{"DynamoDB.Query", "DynamoDB.Query", "DynamoDB.BatchWriteItem"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first delivery made %v, want %v", got, want)
	}

	st.Calls.Reset()
	if err := svc.Process(context.Background(), job); err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	if calls != 1 {
		t.Fatalf("redelivery called the translator again (%d calls in all)", calls)
	}
	if got, want := st.Calls.Calls(), []string{"DynamoDB.Query", "DynamoDB.Query"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("redelivery made %v, want %v", got, want)
	}
}

type countingTranslator struct {
	langs *translation.Languages
	calls *int
}

func (c *countingTranslator) Targets(context.Context, string) (*translation.Languages, error) {
	return c.langs, nil
}

func (c *countingTranslator) Translate(_ context.Context, text, _, target string) (translation.Result, error) {
	*c.calls++
	return translation.Result{Text: target + ": " + text}, nil
}
