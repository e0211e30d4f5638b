package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// TestSampleEvent: the sample (a room id that is not one) is a JSON 404;
// a room's page is HTML carrying the room id and the realtime URL, under a
// strict Content-Security-Policy that allows that URL's origin; its
// script is served, an unknown file is not.
func TestSampleEvent(t *testing.T) {
	wiringtest.Demo(t)
	t.Setenv(app.EnvRealtimeURL, "wss://abc123.execute-api.us-east-1.amazonaws.com/live")
	h, err := app.HTTPFromEnv(context.Background(), "GuestPageFunction")
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev := wiringtest.Event[events.APIGatewayV2HTTPRequest](t, "guest-page.json")
	resp, err := h(context.Background(), ev)
	if err != nil || resp.StatusCode != 404 || !strings.Contains(resp.Body, `"not_found"`) {
		t.Fatalf("sample: %d %v %s, want a JSON 404", resp.StatusCode, err, resp.Body)
	}
	const room = "01JD9N113GQYDPWDARF68MKWR7"
	ev.RawPath, ev.RequestContext.HTTP.Path, ev.PathParameters = "/rooms/"+room, "/rooms/"+room, map[string]string{"room_id": room}
	resp, err = h(context.Background(), ev)
	csp := resp.Headers["Content-Security-Policy"]
	if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Headers["Content-Type"], "text/html") ||
		!strings.Contains(resp.Body, `data-room-id="`+room+`"`) || !strings.Contains(resp.Body, `data-realtime-url="wss://abc123.execute-api.us-east-1.amazonaws.com/live"`) {
		t.Fatalf("page: %d %v %v %.300s", resp.StatusCode, err, resp.Headers, resp.Body)
	}
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "connect-src 'self' wss://abc123.execute-api.us-east-1.amazonaws.com;"} {
		if !strings.Contains(csp, want) {
			t.Fatalf("CSP %q lacks %q", csp, want)
		}
	}
	for path, want := range map[string]int{"/assets/guest.js": 200, "/assets/guest.css": 200, "/assets/..%2Fembed.go": 404, "/assets/guest.html": 404} {
		ev.RawPath, ev.RequestContext.HTTP.Path, ev.RouteKey = path, path, "GET /assets/{file}"
		ev.PathParameters = map[string]string{"file": strings.TrimPrefix(path, "/assets/")}
		resp, _ := h(context.Background(), ev)
		if resp.StatusCode != want {
			t.Fatalf("%s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
