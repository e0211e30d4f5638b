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
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-support-webhooks.json")
	resp, err := h(context.Background(), ev)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
	}
	if n := len(wiringtest.Body(t, resp)["data"].([]any)); n != len(doc.Workspaces[0].SupportWebhooks) {
		t.Fatalf("%d support webhooks, want the fixture's %d", n, len(doc.Workspaces[0].SupportWebhooks))
	}
	ev.RawQueryString = "limit=0"
	bad, _ := h(context.Background(), ev)
	if bad.StatusCode != 422 {
		t.Fatalf("limit=0: %d %s, want 422", bad.StatusCode, bad.Body)
	}
}
