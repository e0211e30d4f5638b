package wsgateway_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi/types"
	"github.com/chatbridge/chat/internal/wsgateway"
	"github.com/chatbridge/chat/pkg/realtime"
	"github.com/chatbridge/chat/pkg/wsapi"
	"github.com/coder/websocket"
)

type rig struct {
	g      *wsgateway.Gateway
	ws     *httptest.Server
	client *wsapi.Client
	mu     sync.Mutex
	events []events.APIGatewayWebsocketProxyRequest
}

func newRig(t *testing.T, subscribeWithin time.Duration) *rig {
	t.Helper()
	r := &rig{}
	r.g = &wsgateway.Gateway{SubscribeWithin: subscribeWithin, Routes: map[string]wsgateway.Handler{
		"$default": func(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
			if ev.Body == `{"action":"subscribe"}` {
				// Answer through the Management API, as RealtimeFunction does.
				if err := r.client.Send(ctx, ev.RequestContext.ConnectionID, []byte(`{"type":"subscribed"}`)); err != nil {
					t.Errorf("send: %v", err)
				}
			}
			return events.APIGatewayProxyResponse{StatusCode: 200}, nil
		},
	}}
	r.ws = httptest.NewServer(r.g)
	mgmt := httptest.NewServer(r.g.Management())
	t.Cleanup(r.ws.Close)
	t.Cleanup(mgmt.Close)
	r.client = wsapi.NewClientFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, mgmt.URL+"/local")
	return r
}

func (r *rig) dial(t *testing.T) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(r.ws.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

func readErr(ws *websocket.Conn, within time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	_, b, err := ws.Read(ctx)
	return b, err
}

// TestSilentConnectionIsClosed: a connection that has not been answered
// "subscribed" within the limit is closed (policy violation); one that has
// stays open past it.
func TestSilentConnectionIsClosed(t *testing.T) {
	r := newRig(t, 300*time.Millisecond)
	silent := r.dial(t)
	talker := r.dial(t)
	if err := talker.Write(context.Background(), websocket.MessageText, []byte(`{"action":"subscribe"}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := readErr(talker, 2*time.Second); err != nil || string(b) != `{"type":"subscribed"}` {
		t.Fatalf("subscribed answer: %q %v", b, err)
	}
	start := time.Now()
	_, err := readErr(silent, 3*time.Second)
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation || time.Since(start) > 2*time.Second {
		t.Fatalf("silent connection: %v after %v, want closed with policy violation after about 300ms", err, time.Since(start))
	}
	if _, err := readErr(talker, 600*time.Millisecond); websocket.CloseStatus(err) != -1 {
		t.Fatalf("subscribed connection closed: %v", err)
	}
	r.mu.Lock()
	ev := r.events[0]
	r.mu.Unlock()
	if ev.RequestContext.EventType != "MESSAGE" || ev.RequestContext.RouteKey != "$default" || !realtime.ValidConnectionID(ev.RequestContext.ConnectionID) || ev.RequestContext.Stage != "local" {
		t.Fatalf("event %+v, want a MESSAGE on $default with an API Gateway-shaped connection id", ev.RequestContext)
	}
}

// TestManagementAPIThroughTheSDK: the real SDK client posts, reads and
// deletes connections; a gone one is realtime.ErrGone; a message past 128
// KB is refused both ways.
func TestManagementAPIThroughTheSDK(t *testing.T) {
	r := newRig(t, 0)
	ws := r.dial(t)
	if err := ws.Write(context.Background(), websocket.MessageText, []byte(`{"action":"hello"}`)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	var id string
	for id == "" && time.Now().Before(deadline) {
		r.mu.Lock()
		if len(r.events) > 0 {
			id = r.events[0].RequestContext.ConnectionID
		}
		r.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	ctx := context.Background()
	if alive, err := r.client.Alive(ctx, id); !alive || err != nil {
		t.Fatalf("alive: %v %v", alive, err)
	}
	worst := `{"x":"` + strings.Repeat("\u2028", 10) + `🎉"}`
	if err := r.client.Send(ctx, id, []byte(worst)); err != nil {
		t.Fatal(err)
	}
	if b, err := readErr(ws, time.Second); err != nil || string(b) != worst {
		t.Fatalf("got %q %v, want %q", b, err, worst)
	}
	var tooLarge *types.PayloadTooLargeException
	var status interface{ HTTPStatusCode() int }
	if err := r.client.Send(ctx, id, make([]byte, wsgateway.MaxMessageBytes+1)); !errors.As(err, &tooLarge) || !errors.As(err, &status) || status.HTTPStatusCode() != 413 {
		t.Fatalf("a post past 128 KB: got %v, want 413 PayloadTooLargeException", err)
	}
	ws.SetReadLimit(wsgateway.MaxMessageBytes)
	if err := r.client.Send(ctx, id, []byte(strings.Repeat("x", wsgateway.MaxMessageBytes))); err != nil {
		t.Fatalf("a post of exactly 128 KB: got %v, want it sent", err)
	}
	if b, err := readErr(ws, time.Second); err != nil || len(b) != wsgateway.MaxMessageBytes {
		t.Fatalf("got %d bytes (%v), want the 128 KB sent", len(b), err)
	}
	if err := r.client.Send(ctx, "bm90IHRoZXJlAA==", []byte("x")); !errors.Is(err, realtime.ErrGone) {
		t.Fatalf("post to an unknown connection: %v, want ErrGone", err)
	}
	if err := r.client.Close(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := readErr(ws, time.Second); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after DeleteConnection: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	if alive, err := r.client.Alive(ctx, id); alive || err != nil {
		t.Fatalf("alive after close: %v %v", alive, err)
	}
	if err := r.client.Close(ctx, id); err != nil {
		t.Fatalf("closing a gone connection: %v", err)
	}
	// A client message past 128 KB closes the connection (message too big).
	ws2 := r.dial(t)
	_ = ws2.Write(ctx, websocket.MessageText, make([]byte, wsgateway.MaxMessageBytes+1))
	if _, err := readErr(ws2, 2*time.Second); websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("a message past 128 KB: %v, want closed with 1009", err)
	}
}

// TestPostLatency: with PostLatency every post answers after it; a caller
// that gives up first gets an error and the message is not delivered.
func TestPostLatency(t *testing.T) {
	r := newRig(t, 0)
	r.g.PostLatency = 50 * time.Millisecond
	ws := r.dial(t)
	if err := ws.Write(context.Background(), websocket.MessageText, []byte(`{"action":"hello"}`)); err != nil {
		t.Fatal(err)
	}
	id := r.awaitConnection(t)
	start := time.Now()
	if err := r.client.Send(context.Background(), id, []byte("slow")); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Fatalf("post answered after %v, want at least the 50 ms latency", took)
	}
	if b, err := readErr(ws, time.Second); err != nil || string(b) != "slow" {
		t.Fatalf("got %q %v, want the post", b, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := r.client.Send(ctx, id, []byte("abandoned")); err == nil {
		t.Fatalf("a post abandoned before the latency: got no error")
	}
	if b, err := readErr(ws, 200*time.Millisecond); err == nil {
		t.Fatalf("the abandoned post was delivered: %q", b)
	}
}

// awaitConnection is the id of the first connection that sent a message.
func (r *rig) awaitConnection(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		if len(r.events) > 0 {
			id := r.events[0].RequestContext.ConnectionID
			r.mu.Unlock()
			return id
		}
		r.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no connection sent a message within 2 s")
	return ""
}
