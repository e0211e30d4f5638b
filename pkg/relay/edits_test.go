package relay_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/edits"
	evs "github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/relay"
	"github.com/chatbridge/chat/pkg/sqsqueue"
)

// An edit's stream record queues its new revision for translation like a
// new message (the old revision's job, delivered again, stores nothing);
// a deletion's has the relay remove the stored translations.
func TestRelayTranslatesEditsAndCleansDeletions(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	now := time.Now().UTC()
	bot := edits.Actor{Type: chat.AuthorBot, ID: ids.New(now), Name: "CI Bot", WorkspaceID: ids.New(now)}
	m := chat.Message{ID: ids.New(now), WorkspaceID: bot.WorkspaceID, ChannelID: w.channel,
		Author: chat.Author{Type: bot.Type, ID: bot.ID, Name: bot.Name}, Content: "Hello", SourceLanguage: "en",
		Status: chat.MessageQueued, CreatedAt: now}
	if err := w.store.PutMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	r := &relay.Relay{Queue: sqsqueue.New(w.st.SQS, w.st.Resources.Queues["TranslationQueue"]), Translations: w.store.Translation}
	relayAll := func() {
		t.Helper()
		resp, err := r.HandleStream(ctx, allStreamRecords(t, w))
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("relay: %+v %v", resp, err)
		}
	}
	stored := func() map[string]string {
		t.Helper()
		out, err := w.st.DB.Query(ctx, &dynamodb.QueryInput{TableName: &w.st.Table, ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "MSG#" + m.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, it := range out.Items {
			got[it["sk"].(*types.AttributeValueMemberS).Value] = it["content"].(*types.AttributeValueMemberS).Value
		}
		return got
	}
	relayAll()
	if n := w.translateQueue(t, &spanish{}); n != 1 {
		t.Fatalf("jobs after the post: got %d, want 1", n)
	}
	if got := stored(); got["TR#es"] != "[es] Hello" {
		t.Fatalf("translations after the post: %v", got)
	}

	_, applied, _, err := w.store.Edits.EditMessage(ctx, edits.Change{ChannelID: w.channel, MessageID: m.ID, Actor: bot,
		Content: "Hello again", Now: time.Now().UTC()})
	if err != nil || !applied {
		t.Fatalf("edit: applied %v, %v", applied, err)
	}
	// The whole stream again: the insert's job (revision 1) comes back
	// beside the edit's (revision 2), in whatever order the queue gives.
	relayAll()
	tr := &spanish{}
	if n := w.translateQueue(t, tr); n != 2 {
		t.Fatalf("jobs after the edit: got %d, want 2 (the post's again, the edit's)", n)
	}
	if tr.calls.Load() != 1 {
		t.Fatalf("translator calls after the edit: got %d, want 1 (only the new content)", tr.calls.Load())
	}
	if got := stored(); got["TR#es"] != "[es] Hello again" {
		t.Fatalf("translations after the edit: %v, want the revision 2 one", got)
	}

	if _, applied, _, err := w.store.Edits.DeleteMessage(ctx, edits.Change{ChannelID: w.channel, MessageID: m.ID, Actor: bot,
		Now: time.Now().UTC()}); err != nil || !applied {
		t.Fatalf("delete: applied %v, %v", applied, err)
	}
	relayAll()
	if got := stored(); len(got) != 0 {
		t.Fatalf("translations after the deletion: %v, want none", got)
	}
	w.translateQueue(t, &spanish{})
	if got := stored(); len(got) != 0 {
		t.Fatalf("translations after late jobs of a deleted message: %v, want none", got)
	}
}

// An edit and a deletion of a guest's message reach the outbound webhook
// subscribed to every type (message.updated, message.deleted) and the
// support webhook (room.message_updated, room.message_deleted), once each:
// the edit's with the new content at revision 2 while the message stands,
// and none with content once it is deleted, the edit's record read again
// after the deletion included (deleted means gone).
func TestEditEventsFromTheStream(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	_, m := seedEveryEvent(t, w)
	guest := edits.Actor{Type: chat.AuthorGuest, ID: m.Author.ID, Name: m.Author.Name, WorkspaceID: m.WorkspaceID}
	dq := w.st.Resources.Queues["DeliveryQueue"]
	r := &relay.Relay{Queue: sqsqueue.New(w.st.SQS, w.st.Resources.Queues["TranslationQueue"]),
		Events: &relay.Fanout{Store: w.store.Relay, Queue: sqsqueue.New(w.st.SQS, dq)}, Translations: w.store.Translation}
	relayAll := func() map[string][]byte {
		t.Helper()
		resp, err := r.HandleStream(ctx, allStreamRecords(t, w))
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("relay: %+v %v", resp, err)
		}
		got := map[string][]byte{}
		for _, d := range w.deliveries(t, dq) {
			if _, dup := got[d.Kind+" "+d.EventType]; dup {
				t.Fatalf("%s %s delivered twice", d.Kind, d.EventType)
			}
			got[d.Kind+" "+d.EventType] = d.Body
		}
		return got
	}
	if _, ok, _, err := w.store.Edits.EditMessage(ctx, edits.Change{ChannelID: m.ChannelID, MessageID: m.ID, Actor: guest,
		Content: "hola de nuevo", Now: time.Now().UTC()}); err != nil || !ok {
		t.Fatalf("edit: %v %v", ok, err)
	}
	got := relayAll()
	var up struct{ Data evs.Message }
	if err := json.Unmarshal(got["outbound message.updated"], &up); err != nil || up.Data.Content != "hola de nuevo" ||
		up.Data.Revision != 2 || up.Data.EditedAt == "" {
		t.Fatalf("message.updated %s, want the new content at revision 2", got["outbound message.updated"])
	}
	if !strings.Contains(string(got["support room.message_updated"]), "hola de nuevo") {
		t.Fatalf("room.message_updated %s, want the new content", got["support room.message_updated"])
	}

	if _, ok, _, err := w.store.Edits.DeleteMessage(ctx, edits.Change{ChannelID: m.ChannelID, MessageID: m.ID, Actor: guest,
		Now: time.Now().UTC()}); err != nil || !ok {
		t.Fatalf("delete: %v %v", ok, err)
	}
	got = relayAll()
	for _, k := range []string{"outbound message.updated", "outbound message.deleted", "support room.message_updated", "support room.message_deleted"} {
		if got[k] == nil {
			t.Fatalf("no %s delivery among %d", k, len(got))
		}
		if strings.Contains(string(got[k]), "hola") {
			t.Fatalf("%s carries content: %s", k, got[k])
		}
	}
	var del struct{ Data map[string]any }
	if err := json.Unmarshal(got["outbound message.deleted"], &del); err != nil || del.Data["id"] != m.ID || del.Data["deleted_at"] == nil {
		t.Fatalf("message.deleted %s", got["outbound message.deleted"])
	}
}

// TestDeletionScrubsStoredEnvelopes: the deletion's record has the relay
// rewrite every stored envelope that carried the message, scrubbed: those
// it recorded under the message, and one stored before such records were
// kept (found by its derived id).
func TestDeletionScrubsStoredEnvelopes(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	_, m := seedEveryEvent(t, w)
	dq := w.st.Resources.Queues["DeliveryQueue"]
	r := &relay.Relay{Queue: sqsqueue.New(w.st.SQS, w.st.Resources.Queues["TranslationQueue"]),
		Events: &relay.Fanout{Store: w.store.Relay, Queue: sqsqueue.New(w.st.SQS, dq)}, Translations: w.store.Translation}
	seen := map[string]bool{}
	relayNew := func() { // the records the relay has not read yet
		t.Helper()
		var ev events.DynamoDBEvent
		for _, rec := range allStreamRecords(t, w).Records {
			if !seen[rec.Change.SequenceNumber] {
				seen[rec.Change.SequenceNumber] = true
				ev.Records = append(ev.Records, rec)
			}
		}
		if resp, err := r.HandleStream(ctx, ev); err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("relay: %+v %v", resp, err)
		}
		w.deliveries(t, dq)
	}
	envelopes := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		items, err := w.store.Relay.QueryAll(ctx, "scan", &dynamodb.QueryInput{KeyConditionExpression: aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "MSG#" + m.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{evs.DeriveID(m.CreatedAt, evs.MessageCreated, m.ID)}
		for _, it := range items {
			if id, ok := it["event_id"].(*types.AttributeValueMemberS); ok {
				ids = append(ids, id.Value)
			}
		}
		for _, id := range ids {
			got, err := w.st.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &w.st.Table, ConsistentRead: aws.Bool(true),
				Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "EVENT#" + id}, "sk": &types.AttributeValueMemberS{Value: "#META"}}})
			if err != nil {
				t.Fatal(err)
			}
			if b, ok := got.Item["body"].(*types.AttributeValueMemberS); ok {
				out[got.Item["type"].(*types.AttributeValueMemberS).Value] = b.Value
			}
		}
		return out
	}
	relayNew()
	before := envelopes()
	for _, typ := range []string{evs.MessageCreated, evs.RoomMessageCreated, evs.MessageTranslated} {
		if !strings.Contains(before[typ], "hola") {
			t.Fatalf("stored %s %q, want the content while the message stands", typ, before[typ])
		}
	}
	// message.created as stored before its record under the message was
	// kept.
	if _, err := w.st.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &w.st.Table, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "MSG#" + m.ID},
		"sk": &types.AttributeValueMemberS{Value: "EVENT#" + evs.DeriveID(m.CreatedAt, evs.MessageCreated, m.ID)}}}); err != nil {
		t.Fatal(err)
	}
	guest := edits.Actor{Type: chat.AuthorGuest, ID: m.Author.ID, Name: m.Author.Name, WorkspaceID: m.WorkspaceID}
	if _, ok, _, err := w.store.Edits.DeleteMessage(ctx, edits.Change{ChannelID: m.ChannelID, MessageID: m.ID, Actor: guest,
		Now: time.Now().UTC()}); err != nil || !ok {
		t.Fatalf("delete: %v %v", ok, err)
	}
	relayNew()
	after := envelopes()
	for _, typ := range []string{evs.MessageCreated, evs.RoomMessageCreated, evs.MessageTranslated} {
		if strings.Contains(after[typ], "hola") || !strings.Contains(after[typ], `"id":"`+m.ID+`","workspace_id":"`+m.WorkspaceID+`","channel_id":"`+m.ChannelID+`","deleted":true`) {
			t.Fatalf("stored %s after the deletion %q, want the message scrubbed", typ, after[typ])
		}
	}
}
