package dynamo_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/relay"
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
	store := storetest.New(st.DB, st.Table)
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
	got, err := store.Translation.Readers(context.Background(), channel, now)
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
	got, err = store.Translation.Readers(context.Background(), channel, now.Add(61*time.Minute))
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
	store := storetest.New(st.DB, st.Table)
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
	got, err := store.Translation.Readers(context.Background(), channel, time.Now())
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

// putMessage stores a message of channel as a post does and returns its id.
func putMessage(t *testing.T, store *storetest.Stores, channel string) string {
	t.Helper()
	ids := chat.NewIDs()
	now := time.Now()
	m := chat.Message{ID: ids.New(now), WorkspaceID: ids.New(now), ChannelID: channel,
		Author: chat.Author{Type: chat.AuthorBot, Name: "CI Bot"}, Content: "Hello", SourceLanguage: "en",
		Status: chat.MessageQueued, CreatedAt: now}
	if err := store.PutMessage(context.Background(), m); err != nil {
		t.Fatalf("put message: %v", err)
	}
	return m.ID
}

// listed returns the translated languages the guest list reads on the
// Message of channel, sorted.
func listed(t *testing.T, store *storetest.Stores, channel, msg string) []string {
	t.Helper()
	page, err := store.Rooms.ListMessages(context.Background(), channel, "", 100)
	if err != nil {
		t.Fatalf("list messages: %v", err)
	}
	for _, m := range page.Items {
		if m.ID == msg {
			langs := append([]string(nil), m.TranslatedLanguages...)
			sort.Strings(langs)
			return langs
		}
	}
	t.Fatalf("message %s is not listed in channel %s", msg, channel)
	return nil
}

func doneLanguages(done map[string]bool) []string {
	var out []string
	for l, ok := range done {
		if ok {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

func TestSaveAndListTranslations(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	ids := chat.NewIDs()
	ctx := context.Background()
	channel := ids.New(time.Now())
	msg, other := putMessage(t, store, channel), putMessage(t, store, channel)
	created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

	// 30 languages: two BatchWriteItem calls of at most 25, then the set.
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
	if err := store.Translation.SaveTranslations(ctx, channel, msg, ts, true); err != nil {
		t.Fatalf("SaveTranslations: %v", err)
	}
	if calls, want := st.Calls.Calls(), []string{"DynamoDB.BatchWriteItem", "DynamoDB.BatchWriteItem", "DynamoDB.UpdateItem"}; !reflect.DeepEqual(calls, want) {
		t.Fatalf("SaveTranslations of 30 made %v, want %v", calls, want)
	}
	if err := store.Translation.SaveTranslations(ctx, channel, other, []chat.Translation{{MessageID: other, Language: "fr", Content: "Salut", CreatedAt: created}}, false); err != nil {
		t.Fatalf("SaveTranslations: %v", err)
	}

	st.Calls.Reset()
	stored, err := store.Translation.Message(ctx, channel, msg)
	if err != nil {
		t.Fatalf("Message: %v", err)
	}
	if calls := st.Calls.Calls(); !reflect.DeepEqual(calls, []string{"DynamoDB.GetItem"}) {
		t.Fatalf("Message made %v, want one GetItem", calls)
	}
	if got := doneLanguages(stored.Done); !reflect.DeepEqual(got, want) || stored.Content != "Hello" || stored.Marked {
		t.Fatalf("Message: got %v %q marked %v, want %v \"Hello\", finished", got, stored.Content, stored.Marked, want)
	}
	// A save that is not finished leaves the marker.
	if st, err := store.Translation.Message(ctx, channel, other); err != nil || !st.Marked || st.Content != "Hello" {
		t.Fatalf("Message of a message saved unfinished: %+v %v, want it marked", st, err)
	}
	// The guest list reads the same set off the message items.
	if got := listed(t, store, channel, msg); !reflect.DeepEqual(got, want) {
		t.Fatalf("listed message's languages: got %v, want %v", got, want)
	}
	if got := listed(t, store, channel, other); !reflect.DeepEqual(got, []string{"fr"}) {
		t.Fatalf("other message's languages: got %v, want [fr]", got)
	}

	// A later save adds to the set; a language saved again is not repeated.
	if err := store.Translation.SaveTranslations(ctx, channel, other, []chat.Translation{
		{MessageID: other, Language: "fr", Content: "Salut !", CreatedAt: created},
		{MessageID: other, Language: "de", Content: "Hallo", CreatedAt: created},
	}, true); err != nil {
		t.Fatalf("SaveTranslations again: %v", err)
	}
	if got := listed(t, store, channel, other); !reflect.DeepEqual(got, []string{"de", "fr"}) {
		t.Fatalf("other message's languages after a second save: got %v, want [de fr]", got)
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
	// The set is a string set on the message item: pk CHAN#<c>, sk MSG#<m>.
	out, err = st.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.Table, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "CHAN#" + channel}, "sk": &types.AttributeValueMemberS{Value: "MSG#" + other},
	}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("get message item: %v", err)
	}
	if ss, ok := out.Item["translated_languages"].(*types.AttributeValueMemberSS); !ok || len(ss.Value) != 2 {
		t.Fatalf("message item's translated_languages is %#v, want a string set of 2", out.Item["translated_languages"])
	}

	none, err := store.Translation.Message(ctx, channel, putMessage(t, store, channel))
	if err != nil || len(none.Done) != 0 || !none.Marked {
		t.Fatalf("Message of an untranslated message: %+v, %v; want none done, marked", none, err)
	}
	// Another channel's message of the same id is another item: none.
	if got, err := store.Translation.Message(ctx, ids.New(time.Now()), msg); !chat.IsCode(err, chat.ENotFound) {
		t.Fatalf("Message in another channel: %+v, %v; want %s", got, err, chat.ENotFound)
	}
	// Translations are of the message they are saved for.
	if err := store.Translation.SaveTranslations(ctx, channel, msg, []chat.Translation{{MessageID: other, Language: "it"}}, true); !chat.IsCode(err, chat.EInternal) {
		t.Fatalf("saving another message's translation: got %v, want %s", err, chat.EInternal)
	}
}

func TestSaveTranslationsOfAGoneMessage(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	ids := chat.NewIDs()
	ctx := context.Background()
	channel, msg := ids.New(time.Now()), ids.New(time.Now())
	st.Calls.Reset()
	if err := store.Translation.SaveTranslations(ctx, channel, msg, []chat.Translation{{MessageID: msg, Language: "es", Content: "Hola"}}, true); err != nil {
		t.Fatalf("SaveTranslations of a message that does not exist: %v, want nothing to do", err)
	}
	if calls, want := st.Calls.Calls(), []string{"DynamoDB.BatchWriteItem", "DynamoDB.UpdateItem"}; !reflect.DeepEqual(calls, want) {
		t.Fatalf("made %v, want %v", calls, want)
	}
	// The condition kept UpdateItem from creating a message item.
	out, err := st.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.Table, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "CHAN#" + channel}, "sk": &types.AttributeValueMemberS{Value: "MSG#" + msg},
	}, ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item != nil {
		t.Fatalf("message item after saving for a gone message: %v, %v; want none", out.Item, err)
	}
}

func TestTranslatedLanguagesOfAGoneMessage(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	ids := chat.NewIDs()
	_, err := store.Translation.Message(context.Background(), ids.New(time.Now()), ids.New(time.Now()))
	if !chat.IsCode(err, chat.ENotFound) {
		t.Fatalf("got %v, want %s: the message does not exist", err, chat.ENotFound)
	}
}

// translationJob seeds a channel whose readers read en, en-GB, es-ES and
// es-MX, and a message in it, and returns the message's job.
func translationJob(t *testing.T, st *stacktest.Stack, store *storetest.Stores) messages.Job {
	t.Helper()
	ids := chat.NewIDs()
	now := time.Now()
	channel, room := ids.New(now), ids.New(now)
	seed(t, st, channelRoom(channel, room, chat.RoomActive, now.Add(time.Hour)))
	langs := []string{"en", "en-GB", "es-ES", "es-MX"}
	for i := 0; i < 8; i++ {
		if i%2 == 0 {
			seed(t, st, userReader(channel, ids.New(now), langs[i%len(langs)]))
		} else {
			seed(t, st, guestReader(channel, room, ids.New(now), langs[i%len(langs)]))
		}
	}
	msg := putMessage(t, store, channel)
	return messages.Job{MessageID: msg, ChannelID: channel, Content: "Hello", SourceLanguage: "en", CreatedAt: now}
}

// TestTranslationServiceAgainstDynamo runs the whole fan-out on the real
// store: three calls for a first delivery (the save is one transaction,
// conditioned on the message's revision), two and no translation for a
// redelivery.
func TestTranslationServiceAgainstDynamo(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	job := translationJob(t, st, store)
	calls := 0
	tr := &countingTranslator{langs: translation.NewLanguages("en", "es"), calls: &calls}
	svc := &translation.Service{Store: store.Translation, Translator: tr}

	st.Calls.Reset()
	if err := svc.Process(context.Background(), job); err != nil {
		t.Fatalf("Process: %v", err)
	}
	if calls != 1 {
		t.Fatalf("8 readers in 2 languages: %d translator calls, want 1", calls)
	}
	if got, want := st.Calls.Calls(), []string{"DynamoDB.Query", "DynamoDB.GetItem", "DynamoDB.TransactWriteItems"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first delivery made %v, want %v", got, want)
	}
	if got := listed(t, store, job.ChannelID, job.MessageID); !reflect.DeepEqual(got, []string{"es"}) {
		t.Fatalf("message records %v, want [es]", got)
	}

	st.Calls.Reset()
	if err := svc.Process(context.Background(), job); err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	if calls != 1 {
		t.Fatalf("redelivery called the translator again (%d calls in all)", calls)
	}
	if got, want := st.Calls.Calls(), []string{"DynamoDB.Query", "DynamoDB.GetItem"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("redelivery made %v, want %v", got, want)
	}
}

// TestLostSaveIsRedone fails the save's one transaction (translations,
// and the record of their languages on the message), before it is sent or
// after it was applied: either both are stored or neither, and the
// redelivery translates again exactly when nothing was stored.
func TestLostSaveIsRedone(t *testing.T) {
	for _, when := range []bool{stacktest.Before, stacktest.After} {
		name := map[bool]string{stacktest.Before: "save never sent", stacktest.After: "save answer lost"}[when]
		t.Run(name, func(t *testing.T) {
			st := stacktest.New(t)
			store := storetest.New(st.DB, st.Table)
			job := translationJob(t, st, store)
			calls := 0
			tr := &countingTranslator{langs: translation.NewLanguages("en", "es"), calls: &calls}
			svc := &translation.Service{Store: store.Translation, Translator: tr}

			st.Faults.Fail("DynamoDB.TransactWriteItems", 0, when)
			err := svc.Process(context.Background(), job)
			if !chat.IsCode(err, chat.EUnavailable) {
				t.Fatalf("Process with the save failing: got %v, want EUnavailable (so the job is redelivered)", err)
			}
			out, err := st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &st.Table, ConsistentRead: aws.Bool(true),
				Key: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: "MSG#" + job.MessageID}, "sk": &types.AttributeValueMemberS{Value: "TR#es"},
				}})
			if err != nil {
				t.Fatal(err)
			}
			recorded := listed(t, store, job.ChannelID, job.MessageID)
			if stored := out.Item != nil; stored != (len(recorded) == 1) || stored != (when == stacktest.After) {
				t.Fatalf("after a failed save: translation stored %v, set %v; want both or neither (both when applied)", stored, recorded)
			}

			st.Calls.Reset()
			if err := svc.Process(context.Background(), job); err != nil {
				t.Fatalf("redelivery: %v", err)
			}
			wantCalls, wantAWS := 2, []string{"DynamoDB.Query", "DynamoDB.GetItem", "DynamoDB.TransactWriteItems"}
			if when == stacktest.After {
				// The write reached the table; only its answer was lost.
				wantCalls, wantAWS = 1, []string{"DynamoDB.Query", "DynamoDB.GetItem"}
			}
			if calls != wantCalls {
				t.Fatalf("translator calls in all: %d, want %d", calls, wantCalls)
			}
			if got := st.Calls.Calls(); !reflect.DeepEqual(got, wantAWS) {
				t.Fatalf("redelivery made %v, want %v", got, wantAWS)
			}
			if got := listed(t, store, job.ChannelID, job.MessageID); !reflect.DeepEqual(got, []string{"es"}) {
				t.Fatalf("after the redelivery the message records %v, want [es]", got)
			}
		})
	}
}

// TestRecordingTranslationsIsNotAnOutboxEvent reads the table's real
// stream: the set's UpdateItem is a MODIFY of the message item, which the
// outbox relay does not forward, so recording a translation never queues
// the message again.
func TestRecordingTranslationsIsNotAnOutboxEvent(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	ctx := context.Background()
	channel := chat.NewIDs().New(time.Now())
	msg := putMessage(t, store, channel)
	if err := store.Translation.SaveTranslations(ctx, channel, msg, []chat.Translation{{MessageID: msg, Language: "es", Content: "Hola"}}, true); err != nil {
		t.Fatalf("SaveTranslations: %v", err)
	}

	ev := streamOf(t, st, "CHAN#"+channel)
	var names []string
	for _, r := range ev.Records {
		names = append(names, r.EventName)
	}
	if want := []string{"INSERT", "MODIFY"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("the message item's stream records are %v, want %v", names, want)
	}
	sender := &jobRecorder{}
	resp, err := (&relay.Relay{Queue: sender}).HandleStream(ctx, ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("relay: %+v, %v", resp, err)
	}
	if len(sender.jobs) != 1 || sender.jobs[0].MessageID != msg {
		t.Fatalf("relay sent %+v, want one job, for the insert of %s", sender.jobs, msg)
	}
}

type jobRecorder struct{ jobs []messages.Job }

func (j *jobRecorder) SendJobs(_ context.Context, jobs []messages.Job) (messages.SendResult, error) {
	j.jobs = append(j.jobs, jobs...)
	return messages.SendResult{}, nil
}

// streamOf reads every record of the table's stream whose pk is pk, as the
// Lambda event the outbox relay receives.
func streamOf(t *testing.T, st *stacktest.Stack, pk string) events.DynamoDBEvent {
	t.Helper()
	ctx := context.Background()
	streams := dynamodbstreams.NewFromConfig(st.AWS)
	desc, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &st.Resources.StreamARN})
	if err != nil {
		t.Fatalf("describe stream: %v", err)
	}
	var ev events.DynamoDBEvent
	for _, shard := range desc.StreamDescription.Shards {
		it, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &st.Resources.StreamARN,
			ShardId: shard.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			t.Fatalf("shard iterator: %v", err)
		}
		out, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
		if err != nil {
			t.Fatalf("get records: %v", err)
		}
		for _, r := range out.Records {
			if r.Dynamodb == nil {
				continue
			}
			if k, ok := r.Dynamodb.Keys["pk"].(*streamtypes.AttributeValueMemberS); !ok || k.Value != pk {
				continue
			}
			ev.Records = append(ev.Records, events.DynamoDBEventRecord{EventName: string(r.EventName), Change: events.DynamoDBStreamRecord{
				SequenceNumber: aws.ToString(r.Dynamodb.SequenceNumber), NewImage: stacktest.LambdaImage(t, r.Dynamodb.NewImage),
			}})
		}
	}
	return ev
}

type countingTranslator struct {
	langs *translation.Languages
	// calls is counted under mu: a message's units are translated
	// concurrently.
	mu    sync.Mutex
	calls *int
}

func (c *countingTranslator) Targets(context.Context, string) (*translation.Languages, error) {
	return c.langs, nil
}

func (c *countingTranslator) Translate(_ context.Context, text, _, target string) (translation.Result, error) {
	c.mu.Lock()
	*c.calls++
	c.mu.Unlock()
	return translation.Result{Text: target + ": " + text}, nil
}
