package main

import (
	"context"
	"github.com/chatbridge/chat/pkg/app"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func TestSampleEvent(t *testing.T) {
	wiringtest.Demo(t)
	ctx := context.Background()
	h, err := app.HTTPFromEnv(ctx, function)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "post-channel-message.json")
	ev.Headers["idempotency-key"] = "wiring-1"
	resp, err := h(ctx, ev)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("sample: %d %v %s, want 201", resp.StatusCode, err, resp.Body)
	}
	data := wiringtest.Body(t, resp)["data"].(map[string]any)
	author := data["author"].(map[string]any)
	if author["type"] != "user" || author["name"] != "Ana" || author["id"] != "01JD9N0W78H8Z7XT23BWPJKAFM" || author["avatar_url"] != nil {
		t.Fatalf("author %v, want the user Ana without avatar", author)
	}
	again, _ := h(ctx, ev)
	if again.StatusCode != 201 || again.Body != resp.Body || again.Headers["Idempotent-Replayed"] != "true" {
		t.Fatalf("retry: %d %v %s, want the same 201 replayed", again.StatusCode, again.Headers, again.Body)
	}
	delete(ev.Headers, "authorization")
	bad, _ := h(ctx, ev)
	if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
		t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
	}
}
