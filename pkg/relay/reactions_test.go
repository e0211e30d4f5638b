package relay_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/reactionstore"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/reactions"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// TestReactionEventsFromTheStream: a guest adds 👍 to a message, then
// removes it (through the reactions store, as the endpoints do): the outbound webhook subscribed to the reaction events gets
// exactly one message.reaction_added and one message.reaction_removed,
// naming the guest; one subscribed to message.created alone gets
// none of them; the same batch read again makes the same events (the same
// event and delivery ids), not new ones.
func TestReactionEventsFromTheStream(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	now := time.Now().UTC()
	ws, msg, guest := ids.New(now), ids.New(now), ids.New(now)
	put := func(item map[string]any) {
		av, err := attributevalue.MarshalMap(item)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.st.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &w.st.Table, Item: av}); err != nil {
			t.Fatal(err)
		}
	}
	subID, otherID := ids.New(now), ids.New(now)
	put(map[string]any{"pk": "WS#" + ws, "sk": "OWH#2026-01-01T00:00:00.000000000Z#" + subID, "id": subID, "active": true,
		"url": "https://out.example.invalid/", "signing_secret": "s", "events": []string{evs.MessageReactionAdded, evs.MessageReactionRemoved}})
	put(map[string]any{"pk": "WS#" + ws, "sk": "OWH#2026-01-01T00:00:01.000000000Z#" + otherID, "id": otherID, "active": true,
		"url": "https://other.example.invalid/", "signing_secret": "s", "events": []string{evs.MessageCreated}})
	// Add, then remove, through the reactions store (the endpoints' writes).
	if err := w.store.PutMessage(ctx, chat.Message{ID: msg, WorkspaceID: ws, ChannelID: w.channel, Author: chat.Author{Type: chat.AuthorBot, Name: "CI Bot"},
		Content: "hello", SourceLanguage: "en", Status: chat.MessageQueued, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	rx := reactionstore.New(w.st.DB, w.st.Table)
	r0 := reactions.Reaction{WorkspaceID: ws, ChannelID: w.channel, MessageID: msg, Owner: "guest:" + guest,
		Author: chat.Author{Type: chat.AuthorGuest, ID: guest, Name: "Zoë"}, Emoji: "👍", Now: now}
	if added, err := rx.Add(ctx, r0); err != nil || !added {
		t.Fatalf("add: %v %v", added, err)
	}
	r0.Now = now.Add(time.Second)
	if removed, err := rx.Remove(ctx, r0); err != nil || !removed {
		t.Fatalf("remove: %v %v", removed, err)
	}
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
		got := map[string]int{}
		for _, d := range w.deliveries(t, dq) {
			if d.EventType == evs.MessageCreated {
				continue // the message's own, to the other webhook
			}
			got[d.EventType]++
			if d.WebhookID != subID {
				t.Fatalf("round %d: %s delivered to webhook %s, want only %s", round, d.EventType, d.WebhookID, subID)
			}
			var body struct {
				ID   string
				Data evs.Reaction
			}
			if err := json.Unmarshal(d.Body, &body); err != nil {
				t.Fatal(err)
			}
			a := body.Data.Author
			if body.Data.MessageID != msg || body.Data.ChannelID != w.channel || body.Data.Emoji != "👍" || a.Type != "guest" || a.ID != guest || a.Name != "Zoë" {
				t.Fatalf("round %d: %s data %+v", round, d.EventType, body.Data)
			}
			if round == 0 {
				first[d.EventType] = body.ID + " " + d.ID
			} else if first[d.EventType] != body.ID+" "+d.ID {
				t.Fatalf("%s: event and delivery %s on the second read, %s on the first", d.EventType, body.ID+" "+d.ID, first[d.EventType])
			}
		}
		if len(got) != 2 || got[evs.MessageReactionAdded] != 1 || got[evs.MessageReactionRemoved] != 1 {
			t.Fatalf("round %d deliveries %v, want one message.reaction_added and one message.reaction_removed", round, got)
		}
	}
}
