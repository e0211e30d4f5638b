package main

import (
	"context"
	"github.com/chatbridge/chat/pkg/app"
	"net/http"
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
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "inbound-webhook.json")
	resp, err := h(context.Background(), ev)
	if err != nil || resp.StatusCode != 202 {
		t.Fatalf("sample: %d %v %s, want 202", resp.StatusCode, err, resp.Body)
	}
	// net/http canonicalises the name; HTTP header names are case-insensitive.
	if got := resp.Headers[http.CanonicalHeaderKey("X-RateLimit-Limit")]; got != "600" {
		t.Fatalf("X-RateLimit-Limit %q, want the fixture's 600 (headers %v)", got, resp.Headers)
	}
	replay, _ := h(context.Background(), ev)
	if replay.StatusCode != 202 || replay.Body != resp.Body || replay.Headers["Idempotent-Replayed"] != "true" {
		t.Fatalf("replay: %d %v %s", replay.StatusCode, replay.Headers, replay.Body)
	}
	ev.Headers["x-service-webhook-secret"] = "wrong"
	bad, _ := h(context.Background(), ev)
	if bad.StatusCode != 401 {
		t.Fatalf("wrong secret: %d %s, want 401", bad.StatusCode, bad.Body)
	}
}
