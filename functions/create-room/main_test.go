package main

import (
	"context"
	"github.com/chatbridge/chat/pkg/app"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/chat"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func TestSampleEvent(t *testing.T) {
	st, _ := wiringtest.Demo(t)
	ctx := context.Background()
	h, err := app.HTTPFromEnv(ctx, function)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "create-room.json")
	// The sample's expires_at is a placeholder: a room lives at most 7 days.
	ev.Body = strings.Replace(ev.Body, "2099-01-01T00:00:00Z", chat.FormatTime(time.Now().Add(time.Hour)), 1)
	resp, err := h(ctx, ev)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("sample: %d %v %s, want 201", resp.StatusCode, err, resp.Body)
	}
	data := wiringtest.Body(t, resp)["data"].(map[string]any)
	id, _ := data["room_id"].(string)
	if data["status"] != "active" || data["join_path"] != "/api/v1/external/rooms/"+id+"/guests" {
		t.Fatalf("room %v, want an active room with its join path", data)
	}
	wiringtest.Join(t, st, id, "fr-FR")
	delete(ev.Headers, "authorization")
	bad, _ := h(ctx, ev)
	if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
		t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
	}
}
