package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func TestSampleEvent(t *testing.T) {
	st, _ := wiringtest.Demo(t)
	ctx := context.Background()
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "edit-webhook-message.json")
	// The sample changes a message the demo's CI Bot posted in its channel.
	id, webhook := ev.PathParameters["message_id"], ev.PathParameters["webhook"]
	store := dynamo.New(dynamodb.NewFromConfig(st.AWS), st.Table)
	if err := store.PutMessage(ctx, chat.Message{ID: id, WorkspaceID: "01JD9N0V80G9T6DXN5EAY6K8H4", ChannelID: "01JD9N0Z50BAKDWE0FBRMSFD5P",
		Author: chat.Author{Type: chat.AuthorBot, ID: webhook, Name: "CI Bot"}, Content: "Build 1042 passed on main.",
		SourceLanguage: "en", Status: chat.MessageQueued, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	h, err := app.HTTPFromEnv(ctx, function)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	resp, err := h(ctx, ev)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("sample: %d %v %s, want 200", resp.StatusCode, err, resp.Body)
	}
	if data := wiringtest.Body(t, resp)["data"].(map[string]any); data["id"] != id || data["revision"] != float64(2) {
		t.Fatalf("body %s, want message %s at revision 2", resp.Body, id)
	}
	if resp.Headers["X-Ratelimit-Limit"] == "" && resp.Headers["X-RateLimit-Limit"] == "" {
		t.Fatalf("headers %v, want the rate-limit headers", resp.Headers)
	}
	delete(ev.Headers, "x-service-webhook-secret")
	if bad, _ := h(ctx, ev); bad.StatusCode != 401 {
		t.Fatalf("without the secret: %d %s, want 401", bad.StatusCode, bad.Body)
	}
}
