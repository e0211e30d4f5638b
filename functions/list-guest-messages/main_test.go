package main

import (
	"context"
	"github.com/chatbridge/chat/pkg/app"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func TestSampleEvent(t *testing.T) {
	st, _ := wiringtest.Demo(t)
	ctx := context.Background()
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-guest-messages.json")
	// The sample's token is a placeholder: a real one comes from a join.
	a, joined := wiringtest.Join(t, st, ev.PathParameters["room_id"], "es-ES")
	if _, err := (&rooms.Poster{Store: a.Store, IDs: a.IDs, Now: time.Now}).Post(ctx, chat.GuestSession{Guest: joined.Guest}, joined.Room, "Hola"); err != nil {
		t.Fatalf("post: %v", err)
	}
	h, err := app.HTTPFromEnv(ctx, function)
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
