package wsgateway_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/chatbridge/chat/internal/wsgateway"
	"github.com/chatbridge/chat/pkg/wsapi"
	"github.com/coder/websocket"
)

// TestOversizedMessageAnswered (issue 24 item 8): through the local
// gateway and the real route, a client message past the route's 32 KiB is
// answered {"type":"error","code":"payload_too_large"} before the
// connection closes, as behind API Gateway (which takes 128 KB messages);
// one past 128 KB is closed by the gateway itself (1009), as API Gateway
// does. Before, the route took up to 128 KB, the same as the gateway's
// read limit, so no client ever saw payload_too_large.
func TestOversizedMessageAnswered(t *testing.T) {
	g := &wsgateway.Gateway{}
	mgmt := httptest.NewServer(g.Management())
	t.Cleanup(mgmt.Close)
	client := wsapi.NewClientFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, mgmt.URL+"/local")
	g.Routes = map[string]wsgateway.Handler{"$default": (&wsapi.Route{Sender: client}).Handle}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	dial := func() *websocket.Conn {
		t.Helper()
		ws, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.CloseNow() })
		return ws
	}
	ctx := context.Background()

	ws := dial()
	msg := `{"action":"ping","pad":"` + strings.Repeat("x", 40<<10) + `"}`
	if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	b, err := readErr(ws, 2*time.Second)
	if err != nil || !strings.Contains(string(b), `"type":"error"`) || !strings.Contains(string(b), `"code":"payload_too_large"`) {
		t.Fatalf("a 40 KiB message: got %q (%v), want the payload_too_large error frame", b, err)
	}
	if _, err := readErr(ws, 2*time.Second); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after payload_too_large: got %v, want the connection closed", err)
	}

	ws = dial()
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"action":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := readErr(ws, 2*time.Second); err != nil || string(b) != `{"type":"pong"}` {
		t.Fatalf("a small ping: got %q (%v), want pong", b, err)
	}
	_ = ws.Write(ctx, websocket.MessageText, []byte(`{"action":"ping","pad":"`+strings.Repeat("x", wsgateway.MaxMessageBytes)+`"}`))
	if _, err := readErr(ws, 2*time.Second); websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("a message past 128 KB: got %v, want closed with 1009", err)
	}
}
