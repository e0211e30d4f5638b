package app_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/app/relaying"
	"github.com/chatbridge/chat/pkg/dynamo/relaystore"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/relay"
)

// TestRedeliverAgainstStack fans three events out to a local receiver that
// fails, lists the delivery log newest first in pages, then redelivers a
// failed delivery as an admin (a member gets 403): the same delivery id
// arrives again, as attempt 3, and succeeds.
func TestRedeliverAgainstStack(t *testing.T) {
	st := stacktest.New(t)
	doc := &fixture.Document{Workspaces: []fixture.Workspace{{
		Name: "Acme", Users: []fixture.User{{Name: "Ana", Role: "admin", PreferredLanguage: "en"}, {Name: "Ben", PreferredLanguage: "en"}},
		Channels:         []fixture.Channel{{Name: "general"}},
		OutboundWebhooks: []fixture.OutboundWebhook{{Name: "local", URL: "https://hook.example.invalid/x", Events: []string{"message.created"}, SigningSecret: "whsig_app_test_secret"}},
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
	ws := doc.Workspaces[0]
	var (
		mu      sync.Mutex
		succeed bool
		hits    []http.Header
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		hits = append(hits, r.Header.Clone())
		if succeed {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	srv.Listener, _ = net.Listen("tcp", "127.0.0.1:0")
	srv.Start()
	defer srv.Close()
	hook := pointOnlyWebhookAt(t, st, a, ws.ID, srv.URL)
	qurl := st.Resources.Queues["DeliveryQueue"]
	t.Setenv(awsenv.EnvDeliveryQueueURL, qurl)
	t.Setenv(app.EnvOutboundAllowCIDRS, "127.0.0.1/32")
	t.Setenv(delivering.EnvOutboundAllowOnly, "true")
	t.Setenv(delivering.EnvDeliverySchedule, "1ms")
	st.AsApp(a)
	handlers, err := handlers.All(a)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{st: st, app: a, h: httpapi.Mux(handlers), doc: doc, ws: ws, token: ws.Users[0].APIToken}
	d, err := delivering.Deliverer(a.For("DeliverWebhooksFunction"), delivering.Queues{Fast: qurl, Slow: st.Resources.Queues["SlowDeliveryQueue"], Wait: st.Resources.Queues["DeliveryWaitQueue"]})
	if err != nil {
		t.Fatal(err)
	}
	// Three messages, a second apart in created_at.
	var entries []relay.ChangeEntry
	for i := range 3 {
		m := chat.Message{ID: chat.NewIDs().New(now), WorkspaceID: ws.ID, ChannelID: ws.Channels[0].ID, Content: "hello <" + string(rune('a'+i)),
			Author: chat.Author{Type: chat.AuthorUser, ID: ws.Users[0].ID, Name: "Ana"}, SourceLanguage: "en", CreatedAt: now.Add(time.Duration(i) * time.Second)}
		entries = append(entries, relay.ChangeEntry{ID: m.ID, Change: relaystore.Change{Kind: relaystore.ChangeMessage, Message: m}})
	}
	if failed := relaying.Fanout(a.For("OutboxRelayFunction"), qurl).Send(context.Background(), entries); len(failed) != 0 {
		t.Fatalf("fan-out failed for %v", failed)
	}
	base := "/api/v1/workspaces/" + ws.ID + "/outbound-webhooks/" + hook.ID + "/deliveries"
	admin := map[string]string{"Authorization": "Bearer " + ws.Users[0].APIToken}
	member := map[string]string{"Authorization": "Bearer " + ws.Users[1].APIToken}
	type view struct {
		ID, Status    string
		EventType     string `json:"event_type"`
		Attempts      int
		Error         *string
		NextAttemptAt *string `json:"next_attempt_at"`
	}
	list := func(q string) ([]view, *string) {
		rec := w.do(t, "GET", base+q, "", member)
		if rec.Code != 200 {
			t.Fatalf("list: %d %s", rec.Code, rec.Body)
		}
		if strings.Contains(rec.Body.String(), "whsig_") || strings.Contains(rec.Body.String(), "v1=") {
			t.Fatalf("the log leaks a secret or signature: %s", rec.Body)
		}
		var body struct {
			Data []view
			Meta struct {
				NextCursor *string `json:"next_cursor"`
			}
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		return body.Data, body.Meta.NextCursor
	}
	consume := func(done func() bool) { deliverOnLanes(st, d.HandleSQS, done) }
	allFailed := func() bool {
		v, _ := list("?limit=100")
		n := 0
		for _, x := range v {
			if x.Status == "failed" {
				n++
			}
		}
		return n == 3
	}
	consume(allFailed)
	if !allFailed() {
		t.Fatal("deliveries did not all fail within 20 s")
	}
	page1, next := list("?limit=2")
	if len(page1) != 2 || next == nil {
		t.Fatalf("first page %+v, next %v; want 2 and a cursor", page1, next)
	}
	page2, last := list("?limit=2&cursor=" + url.QueryEscape(*next))
	if len(page2) != 1 || last != nil {
		t.Fatalf("second page %+v, next %v; want 1 and the end", page2, last)
	}
	all := append(page1, page2...)
	for i := 1; i < len(all); i++ {
		if all[i-1].ID <= all[i].ID {
			t.Fatalf("not newest first: %s before %s", all[i-1].ID, all[i].ID)
		}
	}
	for _, v := range all {
		if v.Attempts != 2 || v.Error == nil || *v.Error != "http_500" || v.EventType != events.MessageCreated || v.NextAttemptAt != nil {
			t.Fatalf("delivery %+v, want failed after 2 attempts with http_500", v)
		}
	}
	target := all[2].ID
	redeliver := base + "/" + target + "/redeliver"
	if rec := w.do(t, "POST", redeliver, "", member); rec.Code != 403 {
		t.Fatalf("member redeliver: %d %s, want 403", rec.Code, rec.Body)
	}
	for _, bad := range []string{base + "/01JDA0000000000000000000DL/redeliver", base + "/not-an-id/redeliver",
		"/api/v1/workspaces/" + ws.ID + "/support-webhooks/" + hook.ID + "/deliveries/" + target + "/redeliver"} {
		if rec := w.do(t, "POST", bad, "", admin); rec.Code != 404 {
			t.Fatalf("redeliver %s: %d %s, want 404", bad, rec.Code, rec.Body)
		}
	}
	mu.Lock()
	succeed = true
	before := len(hits)
	mu.Unlock()
	if rec := w.do(t, "POST", redeliver, "", admin); rec.Code != 202 {
		t.Fatalf("redeliver: %d %s, want 202", rec.Code, rec.Body)
	}
	succeeded := func() bool {
		v, _ := list("?limit=100")
		for _, x := range v {
			if x.ID == target {
				return x.Status == "succeeded"
			}
		}
		return false
	}
	consume(succeeded)
	if !succeeded() {
		t.Fatal("redelivery did not succeed within 20 s")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hits) != before+1 || hits[before].Get("X-Service-Delivery") != target || hits[before].Get("X-Service-Attempt") != "3" {
		t.Fatalf("redelivery: %d new requests, delivery %q attempt %q; want 1, %s, 3", len(hits)-before,
			hits[len(hits)-1].Get("X-Service-Delivery"), hits[len(hits)-1].Get("X-Service-Attempt"), target)
	}
}

// pointOnlyWebhookAt sets the URL of the workspace's one event webhook to
// url, as an administrator (no API may point a webhook at loopback), and
// returns the webhook.
func pointOnlyWebhookAt(t *testing.T, st *stacktest.Stack, a *app.App, workspaceID, url string) events.Webhook {
	t.Helper()
	hooks, err := storetest.New(a.DB, a.Table).Relay.EventWebhooks(context.Background(), workspaceID)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("webhooks: got %v %v, want one", hooks, err)
	}
	_, err = st.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: &st.Table,
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "WS#" + workspaceID}, "sk": &types.AttributeValueMemberS{Value: hooks[0].Key}},
		UpdateExpression: aws.String("SET #u = :u"), ExpressionAttributeNames: map[string]string{"#u": "url"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":u": &types.AttributeValueMemberS{Value: url}}})
	if err != nil {
		t.Fatal(err)
	}
	return hooks[0]
}
