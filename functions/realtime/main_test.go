package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/app/realtiming"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/wsapi"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// TestSampleEvent: the sample's subscribe, with a real guest token, through
// the real handler: the answer is posted to the sample's connection through
// the Management API, and the connection is stored under the room's channel.
func TestSampleEvent(t *testing.T) {
	st, d := wiringtest.Demo(t)
	var mu sync.Mutex
	posts := map[string]string{}
	mgmt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posts[r.Method+" "+r.URL.EscapedPath()] = string(b)
		mu.Unlock()
	}))
	defer mgmt.Close()
	t.Setenv(wsapi.EnvManagementEndpoint, mgmt.URL+"/live")
	room := d.Workspaces[0].TemporaryRooms[0]
	_, joined := wiringtest.Join(t, st, room.RoomID, "es-ES")
	a, sender, err := realtiming.FromEnv(context.Background())
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ev := wiringtest.Event[events.APIGatewayWebsocketProxyRequest](t, "realtime.json")
	ev.Body = strings.Replace(ev.Body, "gst_placeholder_token_of_the_sample_000", joined.Token, 1)
	resp, err := realtiming.Route(a, sender).Handle(context.Background(), ev)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("sample: %+v %v", resp, err)
	}
	got := posts["POST /live/@connections/K7fGadlvoAMCJWA%3D"]
	if !strings.Contains(got, `"type":"subscribed"`) || !strings.Contains(got, room.RoomID) {
		t.Fatalf("posts %v, want subscribed to the sample's connection", posts)
	}
	conns, err := storetest.New(a.DB, a.Table).Conns.Connections(context.Background(), room.ChannelID, time.Now())
	if err != nil || len(conns) != 1 || conns[0].ID != "K7fGadlvoAMCJWA=" || conns[0].Language != "es-ES" {
		t.Fatalf("stored connections %+v %v", conns, err)
	}
}
