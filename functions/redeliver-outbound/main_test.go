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

// TestSampleEvent: the sample's delivery does not exist in the demo, so
// an admin gets 404, a member 403, no token 401. Redelivery itself is
// tested in pkg/app (TestRedeliverAgainstStack).
func TestSampleEvent(t *testing.T) {
	wiringtest.Demo(t)
	h, err := delivering.HTTPFromEnv(context.Background(), function)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "redeliver-outbound.json")
	resp, err := h(context.Background(), ev)
	if err != nil || resp.StatusCode != 404 {
		t.Fatalf("sample: %d %v %s, want 404", resp.StatusCode, err, resp.Body)
	}
	ev.Headers["authorization"] = "Bearer wsk_demo_ben_token"
	if member, _ := h(context.Background(), ev); member.StatusCode != 403 {
		t.Fatalf("member: %d %s, want 403", member.StatusCode, member.Body)
	}
	delete(ev.Headers, "authorization")
	if bad, _ := h(context.Background(), ev); bad.StatusCode != 401 {
		t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
	}
}
