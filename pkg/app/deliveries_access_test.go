package app_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/httpapi"
)

// TestDeliveryLogChecksTheWebhook (issue 24 item 7): the delivery log and
// redelivery answer 404 for a webhook id of the other kind, an unknown id
// and another workspace's webhook, never 200 []; an existing webhook
// without deliveries lists []; a deleted webhook's log stays readable but
// its deliveries are not redelivered (404). A second redelivery while one
// is queued is 409 redelivery_pending.
func TestDeliveryLogChecksTheWebhook(t *testing.T) {
	st := stacktest.New(t)
	active := true
	doc := &fixture.Document{Workspaces: []fixture.Workspace{{
		Name: "Acme", Users: []fixture.User{{Name: "Ana", Role: "admin", PreferredLanguage: "en"}},
		Channels:         []fixture.Channel{{Name: "general"}},
		OutboundWebhooks: []fixture.OutboundWebhook{{Name: "out", URL: "https://hook.example.invalid/o", Events: []string{"message.created"}}},
		SupportWebhooks:  []fixture.SupportWebhook{{Name: "support", URL: "https://hook.example.invalid/s", Active: &active}},
	}, {
		Name: "Other", Users: []fixture.User{{Name: "Zed", Role: "admin", PreferredLanguage: "en"}},
		Channels:         []fixture.Channel{{Name: "elsewhere"}},
		OutboundWebhooks: []fixture.OutboundWebhook{{Name: "theirs", URL: "https://hook.example.invalid/t", Events: []string{"message.created"}}},
	}}}
	now := time.Now()
	if err := doc.Complete(chat.NewIDs(), now); err != nil {
		t.Fatal(err)
	}
	a := app.New(st.AWS, st.Table)
	a.CursorKey = []byte("test-cursor-key-0123456789abcdef")
	if err := storetest.New(a.DB, a.Table).Fixture.Apply(context.Background(), doc, now); err != nil {
		t.Fatal(err)
	}
	ws, other := doc.Workspaces[0], doc.Workspaces[1]
	out, sup, theirs := ws.OutboundWebhooks[0].ID, ws.SupportWebhooks[0].ID, other.OutboundWebhooks[0].ID
	t.Setenv(awsenv.EnvDeliveryQueueURL, st.Resources.Queues["DeliveryQueue"])
	st.AsApp(a)
	handlers, err := handlers.All(a)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{st: st, app: a, h: httpapi.Mux(handlers), doc: doc, ws: ws, token: ws.Users[0].APIToken}
	admin := map[string]string{"Authorization": "Bearer " + ws.Users[0].APIToken}

	// One failed delivery of the outbound webhook, as the delivery
	// function records it, and its event.
	const deliveryID, eventID = "01JDA00000000000000000D001", "01JDA00000000000000000E001"
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	at := now.UTC().Format(time.RFC3339Nano)
	for _, item := range []map[string]types.AttributeValue{
		{"pk": s("DLV#" + ws.ID + "#" + out), "sk": s("DLV#" + deliveryID), "id": s(deliveryID), "webhook_id": s(out),
			"webhook_kind": s("outbound"), "workspace_id": s(ws.ID), "webhook_key": s("OWH#x#" + out), "event_id": s(eventID),
			"event_type": s("message.created"), "status": s("failed"), "attempts": &types.AttributeValueMemberN{Value: "1"},
			"last_attempt_at": s(at), "created_at": s(at), "duration_ms": &types.AttributeValueMemberN{Value: "3"}},
		{"pk": s("EVENT#" + eventID), "sk": s("#META"), "id": s(eventID), "workspace_id": s(ws.ID), "type": s("message.created"),
			"body": s(`{"id":"` + eventID + `","type":"message.created"}`)},
	} {
		if _, err := st.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &st.Table, Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	api := "/api/v1/workspaces/" + ws.ID
	list := func(path string, want, items int) {
		t.Helper()
		rec := w.do(t, "GET", api+path, "", admin)
		if rec.Code != want {
			t.Fatalf("GET %s: got %d %s, want %d", path, rec.Code, rec.Body, want)
		}
		if want != 200 {
			return
		}
		var body struct{ Data []json.RawMessage }
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body.Data) != items {
			t.Fatalf("GET %s: got %s, want %d deliveries", path, rec.Body, items)
		}
	}
	list("/outbound-webhooks/"+out+"/deliveries", 200, 1)
	list("/support-webhooks/"+sup+"/deliveries", 200, 0)
	for _, path := range []string{
		"/support-webhooks/" + out + "/deliveries",                 // the other kind, with deliveries
		"/outbound-webhooks/" + sup + "/deliveries",                // the other kind, without
		"/outbound-webhooks/01JDA0000000000000000000XX/deliveries", // unknown
		"/support-webhooks/01JDA0000000000000000000XX/deliveries",
		"/outbound-webhooks/" + theirs + "/deliveries", // another workspace's
	} {
		list(path, 404, 0)
	}

	redeliver := func(path string, want int, code string) {
		t.Helper()
		rec := w.do(t, "POST", api+path+"/deliveries/"+deliveryID+"/redeliver", "", admin)
		if rec.Code != want || (code != "" && codeOf(t, rec) != code) {
			t.Fatalf("redeliver %s: got %d %s, want %d %s", path, rec.Code, rec.Body, want, code)
		}
	}
	redeliver("/support-webhooks/"+out, 404, chat.ENotFound)
	redeliver("/outbound-webhooks/"+out, 202, "")
	redeliver("/outbound-webhooks/"+out, 409, chat.ERedeliveryPending)

	if rec := w.do(t, "DELETE", api+"/outbound-webhooks/"+out, "", admin); rec.Code != 204 {
		t.Fatalf("delete: got %d %s, want 204", rec.Code, rec.Body)
	}
	list("/outbound-webhooks/"+out+"/deliveries", 200, 1)
	if _, err := st.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: &st.Table,
		Key:              map[string]types.AttributeValue{"pk": s("DLV#" + ws.ID + "#" + out), "sk": s("DLV#" + deliveryID)},
		UpdateExpression: &[]string{"REMOVE redeliver_until"}[0]}); err != nil {
		t.Fatal(err)
	}
	redeliver("/outbound-webhooks/"+out, 404, chat.ENotFound)
}
