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
	h, err := app.HTTPFromEnv(context.Background(), function)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-inbound-requests.json")
	resp, err := h(context.Background(), ev)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
	}
	if data := wiringtest.Body(t, resp)["data"].([]any); len(data) != 0 {
		t.Fatalf("a fresh stack has request log records: %v", data)
	}
	ev.Headers["authorization"] = "Bearer wsk_unknown"
	bad, _ := h(context.Background(), ev)
	if bad.StatusCode != 401 {
		t.Fatalf("unknown token: %d, want 401", bad.StatusCode)
	}
}
