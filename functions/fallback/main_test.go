package main

import (
	"context"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func TestSampleEvent(t *testing.T) {
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "fallback.json")
	resp, err := handler()(context.Background(), ev)
	if err != nil || resp.StatusCode != 404 || resp.Body != `{"message":"The requested resource was not found.","errors":{"code":["not_found"]}}` {
		t.Fatalf("sample: %d %v %s, want the JSON 404", resp.StatusCode, err, resp.Body)
	}
	ev.RawPath = "/webhooks/01JD9N1418BBS5R9EJ3SKBVPMA/messages"
	ev.RequestContext.HTTP.Method = "GET"
	resp, _ = handler()(context.Background(), ev)
	if resp.StatusCode != 405 || resp.Headers["Allow"] != "POST" {
		t.Fatalf("GET on a POST route: %d %v, want 405 with Allow: POST", resp.StatusCode, resp.Headers)
	}
}
