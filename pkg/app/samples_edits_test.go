package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
)

// The wiring checks of the edit and delete functions (samples).
func init() {
	samples["DeleteChannelMessageFunction"] = func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		ctx := context.Background()
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "delete-channel-message.json")
		// The sample edits Ana's message: store it first.
		author := chat.Author{Type: chat.AuthorUser, ID: "01JD9N0W78H8Z7XT23BWPJKAFM", Name: "Ana", Language: "es-ES"}
		id := ev.PathParameters["message_id"]
		store := dynamo.New(dynamodb.NewFromConfig(st.AWS), st.Table)
		if err := store.PutMessage(ctx, chat.Message{ID: id, WorkspaceID: "01JD9N0V80G9T6DXN5EAY6K8H4", ChannelID: "01JD9N1048PXK951NGC7NEMZX9",
			Author: author, Content: "Hola", SourceLanguage: "es-ES", Status: chat.MessageQueued, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		h, err := handlers.FromEnv(ctx, fn)
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

	samples["DeleteGuestMessageFunction"] = func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
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
		h, err := handlers.FromEnv(ctx, fn)
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

	samples["DeleteWebhookMessageFunction"] = func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		ctx := context.Background()
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "delete-webhook-message.json")
		// The sample changes a message the demo's CI Bot posted in its channel.
		id, webhook := ev.PathParameters["message_id"], ev.PathParameters["webhook"]
		store := dynamo.New(dynamodb.NewFromConfig(st.AWS), st.Table)
		if err := store.PutMessage(ctx, chat.Message{ID: id, WorkspaceID: "01JD9N0V80G9T6DXN5EAY6K8H4", ChannelID: "01JD9N0Z50BAKDWE0FBRMSFD5P",
			Author: chat.Author{Type: chat.AuthorBot, ID: webhook, Name: "CI Bot"}, Content: "Build 1042 passed on main.",
			SourceLanguage: "en", Status: chat.MessageQueued, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		h, err := handlers.FromEnv(ctx, fn)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		resp, err := h(ctx, ev)
		if err != nil || resp.StatusCode != 204 {
			t.Fatalf("sample: %d %v %s, want 204", resp.StatusCode, err, resp.Body)
		}
		if resp.Headers["X-Ratelimit-Limit"] == "" && resp.Headers["X-RateLimit-Limit"] == "" {
			t.Fatalf("headers %v, want the rate-limit headers", resp.Headers)
		}
		delete(ev.Headers, "x-service-webhook-secret")
		if bad, _ := h(ctx, ev); bad.StatusCode != 401 {
			t.Fatalf("without the secret: %d %s, want 401", bad.StatusCode, bad.Body)
		}
	}

	samples["EditChannelMessageFunction"] = func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
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
		h, err := handlers.FromEnv(ctx, fn)
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

	samples["EditGuestMessageFunction"] = func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
		ctx := context.Background()
		ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "edit-guest-message.json")
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
		h, err := handlers.FromEnv(ctx, fn)
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

	samples["EditWebhookMessageFunction"] = func(t *testing.T, fn string) {
		st, _ := wiringtest.DemoAs(t, fn)
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
		h, err := handlers.FromEnv(ctx, fn)
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
}
