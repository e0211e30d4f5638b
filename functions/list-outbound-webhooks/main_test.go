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
	h, err := app.HTTPFromEnv(context.Background(), function)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-outbound-webhooks.json")
	resp, err := h(context.Background(), ev)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
	}
	body := wiringtest.Body(t, resp)
	data := body["data"].([]any)
	if len(data) != 2 || data[0].(map[string]any)["id"] != doc.Workspaces[0].OutboundWebhooks[0].ID {
		t.Fatalf("first page %v, want the fixture's first two outbound webhooks", data)
	}
	if body["meta"].(map[string]any)["next_cursor"] == nil {
		t.Fatalf("no next_cursor though the fixture has more")
	}
	delete(ev.Headers, "authorization")
	bad, _ := h(context.Background(), ev)
	if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
		t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
	}
}
