package main

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/samtemplate"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func TestSampleEvent(t *testing.T) {
	requireWired(t)
	st, _ := wiringtest.Demo(t)
	ctx := context.Background()
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-guest-messages.json")
	// The sample's token is a placeholder: a real one comes from a join.
	a := app.New(st.AWS, st.Table)
	joined, err := (&rooms.Service{Store: a.Store, IDs: a.IDs, Now: time.Now}).Join(ctx,
		rooms.JoinRequest{RoomID: ev.PathParameters["room_id"], Nickname: "Ana", PreferredLanguage: "es-ES"})
	if err != nil {
		t.Fatalf("join the sample's room: %v", err)
	}
	if _, err := (&rooms.Poster{Store: a.Store, IDs: a.IDs, Now: time.Now}).Post(ctx, chat.GuestSession{Guest: joined.Guest}, joined.Room, "Hola"); err != nil {
		t.Fatalf("post: %v", err)
	}
	h, err := handler(ctx)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev.Headers["x-service-guest-token"] = joined.Token
	resp, err := h(ctx, ev)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
	}
	body := wiringtest.Body(t, resp)
	data := body["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["content"] != "Hola" || body["meta"].(map[string]any)["limit"] != float64(20) {
		t.Fatalf("body %s, want the one message with limit 20", resp.Body)
	}
	if resp.Headers["X-Request-Id"] != ev.RequestContext.RequestID {
		t.Fatalf("X-Request-Id %q, want API Gateway's request id %q", resp.Headers["X-Request-Id"], ev.RequestContext.RequestID)
	}
	delete(ev.Headers, "x-service-guest-token")
	bad, _ := h(ctx, ev)
	if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
		t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
	}
}

// requireWired skips, saying so, while neither httpapi.Routes nor
// template.yaml declares the function; once either does, the drift tests
// keep both in step and this test runs.
func requireWired(t *testing.T) {
	t.Helper()
	tmpl, err := samtemplate.Parse(chatbundle.Template)
	if err != nil {
		t.Fatal(err)
	}
	_, routed := httpapi.RouteOf(function)
	if !routed && !slices.Contains(tmpl.Functions(), function) {
		t.Skipf("SKIPPED: %s is in neither httpapi.Routes nor template.yaml yet; its wiring cannot be tested", function)
	}
	if !routed {
		t.Fatalf("%s is in template.yaml but not in httpapi.Routes", function)
	}
}
