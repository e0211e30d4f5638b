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
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-channel-messages.json")
	// A guest of the channel's room posts; the member reads it.
	a, joined := wiringtest.Join(t, st, "01JD9N113GQYDPWDARF68MKWR7", "es-ES")
	if _, err := (&rooms.Poster{Store: a.Store, IDs: a.IDs, Now: time.Now}).Post(ctx, chat.GuestSession{Guest: joined.Guest}, joined.Room, "Hola"); err != nil {
		t.Fatalf("post: %v", err)
	}
	h, err := app.HTTPFromEnv(ctx, function)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	resp, err := h(ctx, ev)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
	}
	data := wiringtest.Body(t, resp)["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["content"] != "Hola" || data[0].(map[string]any)["author"].(map[string]any)["type"] != "guest" {
		t.Fatalf("body %s, want the guest's one message", resp.Body)
	}
	delete(ev.Headers, "authorization")
	bad, _ := h(ctx, ev)
	if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
		t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
	}
}
