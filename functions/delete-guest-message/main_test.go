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
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "delete-guest-message.json")
	// The sample's token is a placeholder: a real one comes from a join,
	// and the message is that guest's.
	_, joined := wiringtest.Join(t, st, ev.PathParameters["room_id"], "es-ES")
	ev.Headers["x-service-guest-token"] = joined.Token
	author := chat.Author{Type: chat.AuthorGuest, ID: joined.Guest.ID, Name: joined.Guest.Nickname, Language: "es-ES"}
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
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("sample: %d %v %s, want 204", resp.StatusCode, err, resp.Body)
	}
	if resp.Headers["X-Request-Id"] != ev.RequestContext.RequestID {
		t.Fatalf("X-Request-Id %q, want API Gateway's request id %q", resp.Headers["X-Request-Id"], ev.RequestContext.RequestID)
	}
}
