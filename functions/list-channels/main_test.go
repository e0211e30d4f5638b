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
	_, doc := wiringtest.Demo(t)
	ctx := context.Background()
	h, err := app.HTTPFromEnv(ctx, function)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-channels.json")
	resp, err := h(ctx, ev)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
	}
	body := wiringtest.Body(t, resp)
	data := body["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["id"] != doc.Workspaces[0].Channels[0].ID || body["meta"].(map[string]any)["next_cursor"] == nil {
		t.Fatalf("body %s, want Ana's first channel and a cursor to her second", resp.Body)
	}
	delete(ev.Headers, "authorization")
	bad, _ := h(ctx, ev)
	if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
		t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
	}
}
