package relay_test

import (
	"context"
	"encoding/json"
	"errors"
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
			if tr.Data.Translations["en"] != "hello <b>" {
				t.Fatalf("message.translated translations %v", tr.Data.Translations)
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
		SourceLanguage: "es", CreatedAt: now}}, true); err != nil {
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
	reads    int
	puts     int
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
func (f *fakeEvents) EventTranslations(context.Context, string) (map[string]string, error) {
	f.reads++
	return nil, nil
}
func (f *fakeEvents) PutEvents(_ context.Context, e []evs.Event, _ [][]byte) error {
	f.puts += len(e)
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
