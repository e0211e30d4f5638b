package app_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/app/relaying"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/relaystore"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/relay"
)

// TestLargeEventDeliveredUnderItsPolicy is issue 18 item 1: an envelope
// over events.InlineMax goes on the queue by reference, and the delivery
// function, running as itself under the local IAM check, reads it
// (GetItem EVENT#<id>) and delivers it. With GetItem limited to WS#* it is
// AccessDenied and nothing arrives.
func TestLargeEventDeliveredUnderItsPolicy(t *testing.T) {
	st := stacktest.New(t)
	doc := &fixture.Document{Workspaces: []fixture.Workspace{{
		Name: "Acme", Users: []fixture.User{{Name: "Ana", Role: "admin", PreferredLanguage: "en"}},
		Channels:         []fixture.Channel{{Name: "general"}},
		OutboundWebhooks: []fixture.OutboundWebhook{{Name: "local", URL: "https://hook.example.invalid/x", Events: []string{"message.created"}, SigningSecret: "whsig_app_test_secret"}},
	}}}
	now := time.Now()
	if err := doc.Complete(chat.NewIDs(), now); err != nil {
		t.Fatal(err)
	}
	a := app.New(st.AWS, st.Table)
	if err := storetest.New(a.DB, a.Table).Fixture.Apply(context.Background(), doc, now); err != nil {
		t.Fatal(err)
	}
	ws := doc.Workspaces[0]
	var (
		mu  sync.Mutex
		got []string
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Listener, _ = net.Listen("tcp", "127.0.0.1:0")
	srv.Start()
	defer srv.Close()
	pointOnlyWebhookAt(t, st, a, ws.ID, srv.URL)
	qurl := st.Resources.Queues["DeliveryQueue"]
	t.Setenv(app.EnvOutboundAllowCIDRS, "127.0.0.1/32")
	t.Setenv(delivering.EnvOutboundAllowOnly, "true")
	st.AsApp(a)

	// 15,000 accented characters: 30,000 bytes of content, over InlineMax.
	content := strings.Repeat("é", 15000)
	m := chat.Message{ID: chat.NewIDs().New(now), WorkspaceID: ws.ID, ChannelID: ws.Channels[0].ID, Content: content,
		Author: chat.Author{Type: chat.AuthorUser, ID: ws.Users[0].ID, Name: "Ana"}, SourceLanguage: "fr", CreatedAt: now}
	if len(content) <= events.InlineMax {
		t.Fatalf("content of %d bytes, want over InlineMax (%d)", len(content), events.InlineMax)
	}
	entries := []relay.ChangeEntry{{ID: m.ID, Change: relaystore.Change{Kind: relaystore.ChangeMessage, Message: m}}}
	if failed := relaying.Fanout(a.For("OutboxRelayFunction"), qurl).Send(context.Background(), entries); len(failed) != 0 {
		t.Fatalf("fan-out failed for %v", failed)
	}
	d, err := delivering.Deliverer(a.For("DeliverWebhooksFunction"), delivering.Queues{Fast: qurl, Slow: st.Resources.Queues["SlowDeliveryQueue"], Wait: st.Resources.Queues["DeliveryWaitQueue"]})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		// Lambda's poller reads the queue with the function's role.
		_ = localrun.ConsumeQueue(ctx, sqs.NewFromConfig(st.As("DeliverWebhooksFunction")), qurl, st.Resources.QueueARNs["DeliveryQueue"], 10, d.HandleSQS)
		close(stopped)
	}()
	delivered := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0
	}
	for deadline := time.Now().Add(10 * time.Second); !delivered() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-stopped
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0], content) {
		var denied []string
		if c := stacktest.IAM(); c != nil {
			for _, call := range c.Denied() {
				denied = append(denied, call.Function+" "+call.Action+" "+strings.Join(call.LeadingKeys, ","))
			}
		}
		t.Fatalf("receiver got %d deliveries (the content in the first: %v), want 1 with the 30,000-byte content; calls denied: %v",
			len(got), len(got) > 0 && strings.Contains(got[0], content), denied)
	}
}
