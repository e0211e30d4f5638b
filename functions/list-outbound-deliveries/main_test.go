package main

import (
	"context"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func TestSampleEvent(t *testing.T) {
	wiringtest.Demo(t)
	h, err := delivering.HTTPFromEnv(context.Background(), function)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "list-outbound-deliveries.json")
	resp, err := h(context.Background(), ev)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
	}
	body := wiringtest.Body(t, resp)
	if data := body["data"].([]any); len(data) != 0 || body["meta"].(map[string]any)["next_cursor"] != nil {
		t.Fatalf("got %v, want an empty last page (no delivery yet)", body)
	}
	delete(ev.Headers, "authorization")
	bad, _ := h(context.Background(), ev)
	if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
		t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
	}
}
