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
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "join-room.json")
	resp, err := h(context.Background(), ev)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("sample: %d %v %s, want 201", resp.StatusCode, err, resp.Body)
	}
	data := wiringtest.Body(t, resp)["data"].(map[string]any)
	if data["room"].(map[string]any)["room_id"] != ev.PathParameters["room_id"] {
		t.Fatalf("joined room %v, want the event's", data["room"])
	}
	if resp.Headers["X-Request-Id"] != ev.RequestContext.RequestID {
		t.Fatalf("X-Request-Id %q, want API Gateway's request id %q", resp.Headers["X-Request-Id"], ev.RequestContext.RequestID)
	}
	again, _ := h(context.Background(), ev)
	if again.StatusCode != 200 {
		t.Fatalf("re-join with the same client_id: %d, want 200", again.StatusCode)
	}
	ev.Body = `{"nickname":""}`
	bad, _ := h(context.Background(), ev)
	if bad.StatusCode != 422 {
		t.Fatalf("bad request: %d %s, want 422", bad.StatusCode, bad.Body)
	}
}
