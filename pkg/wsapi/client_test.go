package wsapi_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/chatbridge/chat/internal/wsgateway"
	"github.com/chatbridge/chat/pkg/realtime"
	"github.com/chatbridge/chat/pkg/wsapi"
	"github.com/coder/websocket"
)

func TestEndpoint(t *testing.T) {
	if got, want := wsapi.ManagementEndpoint("abc123", "eu-west-1", "live"), "https://abc123.execute-api.eu-west-1.amazonaws.com/live"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestClientAgainstTheLocalGateway: the adapter, with the real SDK client,
// against the Management API that chatctl serve runs (internal/wsgateway):
// it sends the worst content intact, probes, closes, and reports a gone
// connection as realtime.ErrGone (Close and Alive treat gone as done).
func TestClientAgainstTheLocalGateway(t *testing.T) {
	ids := make(chan string, 1)
	g := &wsgateway.Gateway{Routes: map[string]wsgateway.Handler{"$default": func(_ context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
		ids <- ev.RequestContext.ConnectionID
		return events.APIGatewayProxyResponse{StatusCode: 200}, nil
	}}}
	ws := httptest.NewServer(g)
	defer ws.Close()
	mgmt := httptest.NewServer(g.Management())
	defer mgmt.Close()
	c := wsapi.NewClientFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, mgmt.URL+"/live")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ws.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	if err := conn.Write(ctx, websocket.MessageText, []byte(`{"action":"subscribe"}`)); err != nil {
		t.Fatal(err)
	}
	id := <-ids
	if ok, err := c.Alive(ctx, id); !ok || err != nil {
		t.Fatalf("alive: %v %v", ok, err)
	}
	worst := `{"content":"` + strings.Repeat("<", 1000) + "\u2028🎉\uffff" + `"}`
	if err := c.Send(ctx, id, []byte(worst)); err != nil {
		t.Fatal(err)
	}
	if _, got, err := conn.Read(ctx); err != nil || string(got) != worst {
		t.Fatalf("received %d bytes (%v), want the %d sent intact", len(got), err, len(worst))
	}
	if err := c.Close(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := conn.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after Close: %v, want a normal closure", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for g.Count() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.Send(ctx, id, []byte("x")); !errors.Is(err, realtime.ErrGone) {
		t.Fatalf("send to a closed connection: %v, want ErrGone", err)
	}
	if ok, err := c.Alive(ctx, id); ok || err != nil {
		t.Fatalf("alive after close: %v %v, want false and no error", ok, err)
	}
	if err := c.Close(ctx, id); err != nil {
		t.Fatalf("closing a gone connection: %v", err)
	}
}
