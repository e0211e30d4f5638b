package relay_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/stacktest"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/relaystore"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// TestFanoutFromTheStream makes every change that reports an event with
// the store's own writes, reads the table's real stream (INSERT and
// MODIFY, every item) and runs it through the relay: each webhook gets
// exactly the events section 11 sends it, once, with the same delivery ids
// when the batch is read again.
func TestFanoutFromTheStream(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	room, m := seedEveryEvent(t, w)
	ev := allStreamRecords(t, w)
	dq := w.st.Resources.Queues["DeliveryQueue"]
	r := &relay.Relay{Queue: sqsqueue.New(w.st.SQS, w.st.Resources.Queues["TranslationQueue"]),
		Events: &relay.Fanout{Store: w.store.Relay, Queue: sqsqueue.New(w.st.SQS, dq)}}
	first := map[string]string{}
	for round := range 2 {
		resp, err := r.HandleStream(ctx, ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("round %d: %+v %v", round, resp, err)
		}
		got := map[string]evs.Delivery{}
		for _, d := range w.deliveries(t, dq) {
			got[d.Kind+" "+d.EventType] = d
		}
		var keys []string
		for k, d := range got {
			keys = append(keys, k)
			if round == 0 {
				first[k] = d.ID
			} else if first[k] != d.ID {
				t.Fatalf("%s: delivery id %s on the second read, %s on the first", k, d.ID, first[k])
			}
			if strings.Contains(string(d.Body), "SECRET-HASH") || strings.Contains(string(d.Body), "token") {
				t.Fatalf("%s leaks the guest's token: %s", k, d.Body)
			}
		}
		sort.Strings(keys)
		want := "outbound message.created,outbound message.translated,outbound room.closed,outbound room.created,outbound room.guest_joined," +
			"support room.closed,support room.created,support room.guest_joined,support room.message_created"
		if strings.Join(keys, ",") != want {
			t.Fatalf("round %d deliveries:\n%s\nwant\n%s", round, strings.Join(keys, ","), want)
		}
		if round == 0 {
			var rm struct {
				Data struct {
					Room    evs.Room
					Message evs.Message
				}
			}
			_ = json.Unmarshal(got["support room.message_created"].Body, &rm)
			if rm.Data.Room.RoomID != room.ID || rm.Data.Message.ID != m.ID || rm.Data.Message.Content != m.Content {
				t.Fatalf("room.message_created data %+v", rm.Data)
			}
			var tr struct{ Data evs.Message }
			_ = json.Unmarshal(got["outbound message.translated"].Body, &tr)
			if tr.Data.Translations["en"] != "hello <b>" || !reflect.DeepEqual(tr.Data.AltTexts, map[string][]string{"en": {"", "a screenshot of config.yaml"}}) {
				t.Fatalf("message.translated translations %v, alt texts %q", tr.Data.Translations, tr.Data.AltTexts)
			}
			var cl struct{ Data evs.Room }
			_ = json.Unmarshal(got["support room.closed"].Body, &cl)
			if cl.Data.Status != "closed" || cl.Data.JoinPath != "/api/v1/external/rooms/"+room.ID+"/guests" {
				t.Fatalf("room.closed data %+v", cl.Data)
			}
		}
	}
}

// seedEveryEvent makes, with the store's own writes, every change that
// reports an event: a workspace with an outbound webhook subscribed to
// every type, an inactive one and a support webhook; a room created; a guest
// who joins and posts; the post's translation; the room closed.
func seedEveryEvent(t *testing.T, w *world) (rooms.ManagedRoom, chat.Message) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	ws := ids.New(now)
	put := func(item map[string]any) {
		av, err := attributevalue.MarshalMap(item)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.st.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &w.st.Table, Item: av}); err != nil {
			t.Fatal(err)
		}
	}
	outID, supID, offID := ids.New(now), ids.New(now), ids.New(now)
	put(map[string]any{"pk": "WS#" + ws, "sk": "OWH#2026-01-01T00:00:00.000000000Z#" + outID, "id": outID, "active": true,
		"url": "https://out.example.invalid/", "signing_secret": "s", "events": evs.Types})
	put(map[string]any{"pk": "WS#" + ws, "sk": "OWH#2026-01-01T00:00:01.000000000Z#" + offID, "id": offID, "active": false,
		"url": "https://off.example.invalid/", "signing_secret": "s", "events": evs.Types})
	put(map[string]any{"pk": "WS#" + ws, "sk": "SWH#2026-01-01T00:00:00.000000000Z#" + supID, "id": supID, "active": true,
		"url": "https://support.example.invalid/", "signing_secret": "s"})
	room := rooms.ManagedRoom{Room: chat.Room{ID: ids.New(now), WorkspaceID: ws, ChannelID: w.channel, Name: "Support <1>",
		Status: chat.RoomActive, ExpiresAt: now.Add(time.Hour)}, CreatedAt: now}
	if err := w.store.Rooms.CreateRoom(ctx, room); err != nil {
		t.Fatal(err)
	}
	guest := ids.New(now)
	put(map[string]any{"pk": "ROOM#" + room.ID, "sk": "GUEST#" + guest, "id": guest, "room_id": room.ID, "workspace_id": ws,
		"channel_id": w.channel, "nickname": "Zoë", "preferred_language": "es", "token_hash": "SECRET-HASH",
		"created_at": now, "updated_at": now, "session_expires_at": now.Add(time.Hour)})
	put(map[string]any{"pk": "CHAN#" + w.channel, "sk": "READER#GUEST#" + guest, "kind": "guest", "id": guest, "language": "es", "room_id": room.ID})
	m := chat.Message{ID: ids.New(now), WorkspaceID: ws, ChannelID: w.channel, Author: chat.Author{Type: chat.AuthorGuest, ID: guest, Name: "Zoë"},
		Content: "hola <b>", SourceLanguage: "es", Status: chat.MessageQueued, CreatedAt: now}
	if err := w.store.PutMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := w.store.Translation.SaveTranslations(ctx, w.channel, m.ID, []chat.Translation{{MessageID: m.ID, Language: "en", Content: "hello <b>",
		SourceLanguage: "es", CreatedAt: now, AltTexts: []string{"", "a screenshot of config.yaml"}}}, true); err != nil {
		t.Fatal(err)
	}
	if err := w.store.Rooms.CloseRoom(ctx, room); err != nil {
		t.Fatal(err)
	}
	return room, m
}

// allStreamRecords reads every record of the table's stream as Lambda
// would hand it to the relay.
func allStreamRecords(t *testing.T, w *world) events.DynamoDBEvent {
	t.Helper()
	ctx := context.Background()
	streams := dynamodbstreams.NewFromConfig(w.st.AWS)
	desc, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &w.st.Resources.StreamARN})
	if err != nil {
		t.Fatal(err)
	}
	var ev events.DynamoDBEvent
	for _, sh := range desc.StreamDescription.Shards {
		it, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &w.st.Resources.StreamARN,
			ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			t.Fatal(err)
		}
		out, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range out.Records {
			image := map[string]streamtypes.AttributeValue{}
			for k, v := range r.Dynamodb.NewImage {
				if _, ok := v.(*streamtypes.AttributeValueMemberL); ok { // webhooks' events: not needed here
					continue
				}
				image[k] = v
			}
			rec := events.DynamoDBEventRecord{EventName: string(r.EventName), EventSource: "aws:dynamodb",
				Change: events.DynamoDBStreamRecord{SequenceNumber: aws.ToString(r.Dynamodb.SequenceNumber), NewImage: stacktest.LambdaImage(t, image)}}
			if len(r.Dynamodb.OldImage) > 0 {
				old := map[string]streamtypes.AttributeValue{}
				for k, v := range r.Dynamodb.OldImage {
					if _, ok := v.(*streamtypes.AttributeValueMemberL); !ok {
						old[k] = v
					}
				}
				rec.Change.OldImage = stacktest.LambdaImage(t, old)
			}
			if r.Dynamodb.ApproximateCreationDateTime != nil {
				rec.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *r.Dynamodb.ApproximateCreationDateTime}
			}
			ev.Records = append(ev.Records, rec)
		}
	}
	return ev
}

// fakeEvents is a hand-written EventStore.
type fakeEvents struct {
	webhooks func(ws string) ([]evs.Webhook, error)
	deleted  func(refs []evs.MessageRef) (map[string]time.Time, error)
	reads    int
	puts     int
	bodies   map[string]string // stored envelopes by event type
	scrubbed []string
}

func (f *fakeEvents) EventWebhooks(_ context.Context, ws string) ([]evs.Webhook, error) {
	return f.webhooks(ws)
}
func (f *fakeEvents) EventRoom(context.Context, string) (chat.Room, time.Time, error) {
	f.reads++
	return chat.Room{ID: "R"}, time.Time{}, nil
}
func (f *fakeEvents) GuestRoomID(context.Context, string, string) (string, error) {
	f.reads++
	return "R", nil
}
func (f *fakeEvents) EventTranslations(context.Context, string) (map[string]chat.Translation, error) {
	f.reads++
	return nil, nil
}
func (f *fakeEvents) PutEvents(_ context.Context, e []evs.Event, bodies [][]byte) error {
	f.puts += len(e)
	for i, ev := range e {
		if f.bodies == nil {
			f.bodies = map[string]string{}
		}
		f.bodies[ev.Type] = string(bodies[i])
	}
	return nil
}
func (f *fakeEvents) DeletedMessages(_ context.Context, refs []evs.MessageRef) (map[string]time.Time, error) {
	f.reads++
	if f.deleted == nil {
		return nil, nil
	}
	return f.deleted(refs)
}
func (f *fakeEvents) ScrubMessageEvents(_ context.Context, id string, _ time.Time, _ ...string) error {
	f.scrubbed = append(f.scrubbed, id)
	return nil
}

type fakeSender func(ds []evs.Delivery) ([]int, error)

func (f fakeSender) SendDeliveries(_ context.Context, ds []evs.Delivery) ([]int, error) { return f(ds) }

// TestFanoutDecisions: nothing is read or sent for an event no webhook
// receives; a failure to read webhooks or to send a delivery retries only
// the records concerned.
func TestFanoutDecisions(t *testing.T) {
	guestMsg := func(id, ws string) relay.ChangeEntry {
		return relay.ChangeEntry{ID: id, Change: relaystore.Change{Kind: relaystore.ChangeMessage, Message: chat.Message{ID: id, WorkspaceID: ws,
			Author: chat.Author{Type: chat.AuthorGuest, ID: "G"}}}}
	}
	outOnly := []evs.Webhook{{ID: "O", Kind: evs.KindOutbound, Active: true, Events: []string{evs.RoomClosed}}}
	store := &fakeEvents{webhooks: func(ws string) ([]evs.Webhook, error) {
		if ws == "broken" {
			return nil, errors.New("throttled")
		}
		return outOnly, nil
	}}
	sent := 0
	f := &relay.Fanout{Store: store, Queue: fakeSender(func(ds []evs.Delivery) ([]int, error) { sent += len(ds); return nil, nil })}
	failed := f.Send(context.Background(), []relay.ChangeEntry{guestMsg("a", "ws"), guestMsg("b", "broken"),
		{ID: "c", Change: relaystore.Change{Kind: relaystore.ChangeTranslated, Message: chat.Message{ID: "c", WorkspaceID: "ws"}}}})
	if strings.Join(failed, ",") != "b" || store.reads != 0 || store.puts != 0 || sent != 0 {
		t.Fatalf("failed %v, reads %d, puts %d, sent %d; want [b] and nothing read or sent", failed, store.reads, store.puts, sent)
	}
	closed := func(id string) relay.ChangeEntry {
		return relay.ChangeEntry{ID: id, At: time.Unix(1, 0), Change: relaystore.Change{Kind: relaystore.ChangeRoomClosed, Room: chat.Room{ID: id, WorkspaceID: "ws"}}}
	}
	f.Queue = fakeSender(func(ds []evs.Delivery) ([]int, error) { return []int{1}, errors.New("one refused") })
	if failed := f.Send(context.Background(), []relay.ChangeEntry{closed("x"), closed("y"), closed("z")}); strings.Join(failed, ",") != "y" {
		t.Fatalf("failed %v, want [y]", failed)
	}
}

// TestFanoutDeletedMessages: the events of a message deleted by the time
// the relay reads them are stored and queued scrubbed, its
// message.translated not at all, and its deletion scrubs what was stored
// before; a message still there is sent whole; when whether it is deleted
// cannot be read, its records are retried and the others go on.
func TestFanoutDeletedMessages(t *testing.T) {
	all := []evs.Webhook{{ID: "O", Kind: evs.KindOutbound, Active: true, Events: evs.OutboundTypes}}
	msg := func(id, content string) chat.Message {
		return chat.Message{ID: id, WorkspaceID: "ws", ChannelID: "C", Content: content, Author: chat.Author{Type: chat.AuthorUser, ID: "U"},
			CreatedAt: time.Unix(10, 0), DeletedAt: time.Unix(20, 0)}
	}
	gone, kept := msg("gone", "secret"), msg("kept", "still here")
	entries := []relay.ChangeEntry{
		{ID: "1", Change: relaystore.Change{Kind: relaystore.ChangeMessage, Message: gone}},
		{ID: "2", Change: relaystore.Change{Kind: relaystore.ChangeTranslated, Message: gone, TranslatedAt: time.Unix(15, 0)}},
		{ID: "3", Change: relaystore.Change{Kind: relaystore.ChangeDeleted, Message: gone}},
		{ID: "4", Change: relaystore.Change{Kind: relaystore.ChangeMessage, Message: kept}},
		{ID: "5", At: time.Unix(5, 0), Change: relaystore.Change{Kind: relaystore.ChangeRoomClosed, Room: chat.Room{ID: "R", WorkspaceID: "ws"}}},
	}
	store := &fakeEvents{webhooks: func(string) ([]evs.Webhook, error) { return all, nil },
		deleted: func([]evs.MessageRef) (map[string]time.Time, error) {
			return map[string]time.Time{"gone": time.Unix(20, 0)}, nil
		}}
	var sent []evs.Delivery
	f := &relay.Fanout{Store: store, Queue: fakeSender(func(ds []evs.Delivery) ([]int, error) { sent = append(sent, ds...); return nil, nil })}
	if failed := f.Send(context.Background(), entries[:4]); len(failed) != 0 {
		t.Fatalf("failed %v, want none", failed)
	}
	types := map[string]int{}
	for _, d := range sent {
		types[d.EventType]++
		if strings.Contains(string(d.Body), "secret") {
			t.Fatalf("%s queued with the deleted content: %s", d.EventType, d.Body)
		}
	}
	if types[evs.MessageTranslated] != 0 || types[evs.MessageCreated] != 2 || types[evs.MessageDeleted] != 1 ||
		!strings.Contains(store.bodies[evs.MessageDeleted], `"gone"`) || strings.Join(store.scrubbed, ",") != "gone" {
		t.Fatalf("queued %v, scrubbed %v; want both message.created, the deletion, no message.translated, gone's stored events scrubbed", types, store.scrubbed)
	}
	var whole, scrubbed bool
	for _, d := range sent {
		whole = whole || strings.Contains(string(d.Body), "still here")
		scrubbed = scrubbed || strings.Contains(string(d.Body), `"id":"gone","workspace_id":"ws","channel_id":"C","deleted":true`)
	}
	if !whole || !scrubbed {
		t.Fatalf("kept sent whole %v, gone sent scrubbed %v; want both", whole, scrubbed)
	}

	store.deleted = func([]evs.MessageRef) (map[string]time.Time, error) { return nil, errors.New("throttled") }
	sent = nil
	if failed := f.Send(context.Background(), []relay.ChangeEntry{entries[0], entries[3], entries[4]}); strings.Join(failed, ",") != "1,4" || len(sent) != 1 {
		t.Fatalf("failed %v with %d sent, want [1 4] retried and room.closed sent", failed, len(sent))
	}
}

// TestFanoutSkipsRepeatedEvents: two records of one event in a batch store
// and queue it once.
func TestFanoutSkipsRepeatedEvents(t *testing.T) {
	store := &fakeEvents{webhooks: func(string) ([]evs.Webhook, error) {
		return []evs.Webhook{{ID: "O", Kind: evs.KindOutbound, Active: true, Events: []string{evs.RoomClosed}}}, nil
	}}
	sent := 0
	f := &relay.Fanout{Store: store, Queue: fakeSender(func(ds []evs.Delivery) ([]int, error) { sent += len(ds); return nil, nil })}
	closed := relay.ChangeEntry{ID: "1", At: time.Unix(5, 0), Change: relaystore.Change{Kind: relaystore.ChangeRoomClosed, Room: chat.Room{ID: "R", WorkspaceID: "ws"}}}
	again := closed
	again.ID = "2"
	if failed := f.Send(context.Background(), []relay.ChangeEntry{closed, again}); len(failed) != 0 || store.puts != 1 || sent != 1 {
		t.Fatalf("failed %v, puts %d, sent %d; want one event stored and sent", failed, store.puts, sent)
	}
}

// deliveries receives every delivery queued on the delivery queue at dq,
// hiding each for a minute so that it is read once.
func (w *world) deliveries(t *testing.T, dq string) []evs.Delivery {
	t.Helper()
	var out []evs.Delivery
	for {
		got, err := w.st.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &dq, MaxNumberOfMessages: 10, VisibilityTimeout: 60})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) == 0 {
			return out
		}
		for _, msg := range got.Messages {
			d, err := evs.UnmarshalQueue(aws.ToString(msg.Body))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
	}
}
