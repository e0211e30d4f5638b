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
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "edit-channel-message.json")
	// The sample edits Ana's message: store it first.
	author := chat.Author{Type: chat.AuthorUser, ID: "01JD9N0W78H8Z7XT23BWPJKAFM", Name: "Ana", Language: "es-ES"}
	id := ev.PathParameters["message_id"]
	store := dynamo.New(dynamodb.NewFromConfig(st.AWS), st.Table)
	if err := store.PutMessage(ctx, chat.Message{ID: id, WorkspaceID: "01JD9N0V80G9T6DXN5EAY6K8H4", ChannelID: "01JD9N1048PXK951NGC7NEMZX9",
		Author: author, Content: "Hola", SourceLanguage: "es-ES", Status: chat.MessageQueued, CreatedAt: time.Now()}); err != nil {
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
	data := wiringtest.Body(t, resp)["data"].(map[string]any)
	if data["id"] != id || data["revision"] != float64(2) || data["edited_at"] == nil {
		t.Fatalf("body %s, want message %s at revision 2", resp.Body, id)
	}
	again, _ := h(ctx, ev)
	if again.StatusCode != 412 {
		t.Fatalf("the sample again (If-Match: 1): %d %s, want 412", again.StatusCode, again.Body)
	}
}
