package main

import (
	"context"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

func TestSampleEvent(t *testing.T) {
	st, _ := wiringtest.Demo(t)
	ctx := context.Background()
	h, err := app.HTTPFromEnv(ctx, function)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "close-room.json")
	for i := 0; i < 2; i++ {
		resp, err := h(ctx, ev)
		if err != nil || resp.StatusCode != 200 || wiringtest.Body(t, resp)["data"].(map[string]any)["status"] != "closed" {
			t.Fatalf("close %d: %d %v %s, want 200 closed", i+1, resp.StatusCode, err, resp.Body)
		}
	}
	a := app.New(st.AWS, st.Table)
	_, err = (&rooms.Service{Store: a.Store, IDs: a.IDs, Now: a.Now}).Join(ctx, rooms.JoinRequest{
		RoomID: ev.PathParameters["room_id"], Nickname: "Ana", PreferredLanguage: "es-ES"})
	if !chat.IsCode(err, chat.ERoomExpired) {
		t.Fatalf("join after close: %v, want %s", err, chat.ERoomExpired)
	}
	delete(ev.Headers, "authorization")
	bad, _ := h(ctx, ev)
	if bad.StatusCode != 401 || bad.Body != `{"message":"Unauthenticated."}` {
		t.Fatalf("without a token: %d %s", bad.StatusCode, bad.Body)
	}
}
