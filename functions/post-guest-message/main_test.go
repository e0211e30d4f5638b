package main

import (
	"context"
	"github.com/chatbridge/chat/pkg/app"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/chat"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func TestSampleEvent(t *testing.T) {
	st, _ := wiringtest.Demo(t)
	ctx := context.Background()
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "post-guest-message.json")
	// The sample's token is a placeholder: a real one comes from a join.
	_, joined := wiringtest.Join(t, st, ev.PathParameters["room_id"], "es-ES")
	h, err := app.HTTPFromEnv(ctx, function)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev.Headers["x-service-guest-token"] = joined.Token
	resp, err := h(ctx, ev)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("sample: %d %v %s, want 201", resp.StatusCode, err, resp.Body)
	}
	data := wiringtest.Body(t, resp)["data"].(map[string]any)
	if !chat.ValidID(data["id"].(string)) || data["content"] != "Hola, ¿alguien puede ayudarme con mi pedido?" ||
		data["original_language"] != "es-ES" || data["author"].(map[string]any)["id"] != joined.Guest.ID {
		t.Fatalf("body %s, want the posted message by the joined guest in es-ES", resp.Body)
	}
	if resp.Headers["X-Request-Id"] != ev.RequestContext.RequestID {
		t.Fatalf("X-Request-Id %q, want API Gateway's request id %q", resp.Headers["X-Request-Id"], ev.RequestContext.RequestID)
	}
	ev.Body = `{"content":"   "}`
	bad, _ := h(ctx, ev)
	if bad.StatusCode != 422 {
		t.Fatalf("blank post: %d %s, want 422", bad.StatusCode, bad.Body)
	}
}
