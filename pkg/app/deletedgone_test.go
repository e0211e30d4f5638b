package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/openapitest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/events"
)

// TestDeletedMeansGoneOnEveryPath is the contract's "deleted means gone"
// (sections 11 and 13) on the local strict stack, the outbox relay and the
// delivery function each running as itself: once a message's deletion is
// answered, no path sends or serves its content again. Each case posts a
// message with a content of its own, takes it down one path around a
// deletion, and then holds the bytes the receiver got after the deletion
// answered: none carries the content, and every event that carries the
// message carries it as {"id", "workspace_id", "channel_id", "deleted":
// true, "deleted_at"}. After them: the lists (a member's channel, a guest's
// room) show no content, no stored envelope holds any, and a translation
// finishing after the deletion stores nothing.
//
// Before, the envelope as first built was sent on every path: queued,
// retried, redelivered and recovered deliveries carried the content, a
// stream record read after the deletion was sent as it was, and a
// message.translated relayed after the deletion carried the text.
func TestDeletedMeansGoneOnEveryPath(t *testing.T) {
	w := newEventWorld(t, "2s")
	ctx := context.Background()
	ben, ana := bearer(w.ben), bearer(w.ana)
	guest := w.joinGuest(t, "es-ES")
	// A receiver that refuses the contents the retry and recover cases need
	// to fail; anything else (scrubbed ones included) is taken.
	w.rv.setAnswer(func(d delivered) int {
		if strings.Contains(string(d.body), "secret-retried") || strings.Contains(string(d.body), "secret-recovered") {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	memberDelete := func(t *testing.T, id string) {
		t.Helper()
		if rec := w.do(t, "DELETE", w.msgPath(w.general, id), "", ben); rec.Code != 204 {
			t.Fatalf("delete: %d %s", rec.Code, rec.Body)
		}
	}
	guestPost := func(t *testing.T, content string) string {
		t.Helper()
		rec := w.do(t, "POST", "/api/v1/external/rooms/"+w.room+"/messages", fmt.Sprintf(`{"content":%q}`, content), guest)
		if rec.Code != 201 {
			t.Fatalf("guest post: %d %s", rec.Code, rec.Body)
		}
		return decodeAs[struct{ Data viewBody }](t, rec.Body.Bytes()).Data.ID
	}
	guestDelete := func(t *testing.T, id string) {
		t.Helper()
		if rec := w.do(t, "DELETE", "/api/v1/external/rooms/"+w.room+"/messages/"+id, "", guest); rec.Code != 204 {
			t.Fatalf("guest delete: %d %s", rec.Code, rec.Body)
		}
	}
	// hits counts the deliveries at path of event type typ about message id.
	hits := func(path, typ, id string) int {
		n := 0
		for _, d := range w.rv.of(path, id) {
			if d.eventType() == typ {
				n++
			}
		}
		return n
	}

	var contents []string
	for _, c := range []struct {
		name    string
		content string
		// run posts the message, takes it down its path around a deletion
		// and returns its id and how many requests the receiver had got
		// when the deletion was answered.
		run func(t *testing.T, content string) (id string, deletedAt int)
		// want are the deliveries ("<path> <type>") that must have come
		// after the deletion, scrubbed.
		want []string
	}{
		{"first delivery still queued", "secret-queued", func(t *testing.T, content string) (string, int) {
			id := w.post(t, ben, content)
			w.relayStream(t)
			memberDelete(t, id)
			at := len(w.rv.all())
			w.deliver(t, func() bool { return hits("/out", events.MessageCreated, id) == 1 })
			return id, at
		}, []string{"/out message.created"}},

		{"pending retry", "secret-retried", func(t *testing.T, content string) (string, int) {
			id := w.post(t, ben, content)
			w.relayStream(t)
			w.deliver(t, func() bool { return hits("/out", events.MessageCreated, id) == 1 }) // refused: its retry waits 2 s
			memberDelete(t, id)
			at := len(w.rv.all())
			w.deliver(t, func() bool { return hits("/out", events.MessageCreated, id) == 2 })
			return id, at
		}, []string{"/out message.created"}},

		{"redelivery", "secret-redelivered", func(t *testing.T, content string) (string, int) {
			id := w.post(t, ben, content)
			w.relayStream(t)
			w.deliver(t, func() bool { return hits("/out", events.MessageCreated, id) == 1 })
			memberDelete(t, id)
			at := len(w.rv.all())
			// Redelivered before the relay has read the deletion: its
			// stored envelope still holds the content.
			dlv := w.rv.of("/out", id)[0].header.Get("X-Service-Delivery")
			if rec := w.do(t, "POST", w.wsPath("/outbound-webhooks/"+w.out+"/deliveries/"+dlv+"/redeliver"), "", ana); rec.Code != 202 {
				t.Fatalf("redeliver: %d %s", rec.Code, rec.Body)
			}
			w.deliver(t, func() bool { return hits("/out", events.MessageCreated, id) == 2 })
			return id, at
		}, []string{"/out message.created"}},

		{"recovery", "secret-recovered", func(t *testing.T, content string) (string, int) {
			since := chat.FormatTime(time.Now().Add(-time.Minute))
			id := w.post(t, ben, content)
			w.relayStream(t)
			failed := func() bool {
				r, err := storetest.New(w.app.DB, w.app.Table).Deliveries.Delivery(ctx, w.ws.ID, w.out,
					w.rv.of("/out", id)[0].header.Get("X-Service-Delivery"))
				return err == nil && r.Status == "failed"
			}
			w.deliver(t, func() bool { return hits("/out", events.MessageCreated, id) == 2 && failed() })
			memberDelete(t, id)
			at := len(w.rv.all())
			rec := w.do(t, "POST", w.wsPath("/outbound-webhooks/"+w.out+"/recover"), `{"since":"`+since+`"}`, ana)
			if rec.Code != 202 || !strings.Contains(rec.Body.String(), `"queued":1`) {
				t.Fatalf("recover: %d %s, want 202 with 1 queued", rec.Code, rec.Body)
			}
			w.deliver(t, func() bool { return hits("/out", events.MessageCreated, id) == 3 })
			return id, at
		}, []string{"/out message.created"}},

		{"relayed after the deletion", "secret-lagging", func(t *testing.T, content string) (string, int) {
			id := w.post(t, ben, content)
			memberDelete(t, id)
			at := len(w.rv.all())
			// The stream lags: the insert is read, and delivered, before
			// the deletion's record.
			recs := w.tail.next(t)
			var insert, rest []lambdaevents.DynamoDBEventRecord
			for _, r := range recs {
				if r.EventName == "INSERT" && r.Change.NewImage["sk"].String() == "MSG#"+id {
					insert = append(insert, r)
				} else {
					rest = append(rest, r)
				}
			}
			if len(insert) != 1 {
				t.Fatalf("no insert of %s among %d records", id, len(recs))
			}
			w.relayRecords(t, insert)
			w.deliver(t, func() bool { return hits("/out", events.MessageCreated, id) == 1 })
			w.relayRecords(t, rest)
			w.deliver(t, func() bool { return hits("/out", events.MessageDeleted, id) == 1 })
			return id, at
		}, []string{"/out message.created", "/out message.deleted"}},

		{"translation relayed after the deletion", "secret-translated", func(t *testing.T, content string) (string, int) {
			id := w.post(t, ben, content)
			w.relayStream(t)
			w.deliver(t, func() bool { return hits("/out", events.MessageCreated, id) == 1 })
			if err := storetest.New(w.app.DB, w.app.Table).Translation.SaveRevision(ctx, w.general, id, 1,
				[]chat.Translation{{MessageID: id, Language: "es", Content: "traducido secret-translated", CreatedAt: time.Now()}}, true); err != nil {
				t.Fatal(err)
			}
			memberDelete(t, id)
			at := len(w.rv.all())
			w.relayStream(t) // the translation's record, then the deletion's
			w.deliver(t, func() bool { return hits("/out", events.MessageDeleted, id) == 1 })
			if n := hits("/out", events.MessageTranslated, id); n != 0 {
				t.Fatalf("%d message.translated of the deleted message, want none", n)
			}
			// A translation finishing after the deletion stores nothing.
			if err := storetest.New(w.app.DB, w.app.Table).Translation.SaveRevision(ctx, w.general, id, 1,
				[]chat.Translation{{MessageID: id, Language: "es", Content: "late secret-translated", CreatedAt: time.Now()}}, true); err != nil {
				t.Fatal(err)
			}
			return id, at
		}, []string{"/out message.deleted"}},

		{"a guest's message and its edit, to the support webhook", "secret-guest", func(t *testing.T, content string) (string, int) {
			id := guestPost(t, content)
			w.relayStream(t)
			w.deliver(t, func() bool { return hits("/sup", events.RoomMessageCreated, id) == 1 })
			if rec := w.do(t, "PATCH", "/api/v1/external/rooms/"+w.room+"/messages/"+id, `{"content":"secret-guest edited"}`, guest); rec.Code != 200 {
				t.Fatalf("edit: %d %s", rec.Code, rec.Body)
			}
			w.relayStream(t) // message.updated and room.message_updated, queued with the edit
			guestDelete(t, id)
			at := len(w.rv.all())
			w.deliver(t, func() bool {
				return hits("/sup", events.RoomMessageUpdated, id) == 1 && hits("/out", events.MessageUpdated, id) == 1
			})
			// And a redelivery of room.message_created, after the relay
			// read the deletion.
			w.relayStream(t)
			dlv := ""
			for _, d := range w.rv.of("/sup", id) {
				if d.eventType() == events.RoomMessageCreated {
					dlv = d.header.Get("X-Service-Delivery")
				}
			}
			if rec := w.do(t, "POST", w.wsPath("/support-webhooks/"+w.sup+"/deliveries/"+dlv+"/redeliver"), "", ana); rec.Code != 202 {
				t.Fatalf("redeliver: %d %s", rec.Code, rec.Body)
			}
			w.deliver(t, func() bool { return hits("/sup", events.RoomMessageCreated, id) == 2 })
			return id, at
		}, []string{"/sup room.message_updated", "/out message.updated", "/sup room.message_created"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			contents = append(contents, c.content)
			id, from := c.run(t, c.content)
			got := map[string]bool{}
			for _, d := range w.rv.all()[from:] {
				if !strings.Contains(string(d.body), id) {
					continue
				}
				typ := d.eventType()
				got[d.path+" "+typ] = true
				openapitest.CheckDelivery(t, d.header, d.body) // the catalog describes the scrubbed form
				if strings.Contains(string(d.body), c.content) {
					t.Fatalf("%s %s after the deletion carries the content: %s", d.path, typ, d.body)
				}
				if events.CarriesMessage(typ) && !strings.Contains(string(d.body), `{"id":"`+id+`","workspace_id":"`+w.ws.ID+
					`","channel_id":"`+w.general+`","deleted":true,"deleted_at":"`) {
					t.Fatalf("%s %s after the deletion: %s, want the message scrubbed", d.path, typ, d.body)
				}
			}
			for _, k := range c.want {
				if !got[k] {
					t.Fatalf("no %s after the deletion; got %v", k, got)
				}
			}
		})
		if t.Failed() {
			return
		}
	}

	// Every deletion read by the relay: no stored envelope, list or
	// translation holds any of the contents.
	w.relayStream(t)
	leaks := func(where, s string) {
		t.Helper()
		for _, c := range contents {
			if strings.Contains(s, c) {
				t.Errorf("%s holds %q: %s", where, c, s)
			}
		}
	}
	for _, body := range w.storedEnvelopes(t) {
		leaks("a stored envelope", body)
	}
	leaks("a member's channel list", w.do(t, "GET", w.wsPath("/channels/"+w.general+"/messages?limit=100"), "", ana).Body.String())
	leaks("a guest's room list", w.do(t, "GET", "/api/v1/external/rooms/"+w.room+"/messages?limit=100", "", guest).Body.String())
	if n := w.count(t, "TR#"); n != 0 {
		t.Errorf("%d translations stored after the deletions, want none", n)
	}
}

// storedEnvelopes returns the body of every stored event envelope
// (EVENT#<id>).
func (w *eventWorld) storedEnvelopes(t *testing.T) []string {
	t.Helper()
	var out []string
	p := dynamodb.NewScanPaginator(w.st.DB, &dynamodb.ScanInput{TableName: aws.String(w.st.Table),
		FilterExpression:          aws.String("begins_with(pk, :e)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":e": &types.AttributeValueMemberS{Value: "EVENT#"}}})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if b, ok := it["body"].(*types.AttributeValueMemberS); ok {
				out = append(out, b.Value)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no stored envelope")
	}
	return out
}
