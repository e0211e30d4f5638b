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

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/apigwmanagement"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/realtime"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

// TestSampleEvent: the sample's INSERT then MODIFY (Spanish landing) of one
// message, through the real handler: a Spanish reader's connection gets the
// original, then the Spanish view; a gone connection loses its item.
func TestSampleEvent(t *testing.T) {
	wiringtest.Demo(t)
	var mu sync.Mutex
	var posts []string
	mgmt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/gone") {
			w.Header().Set("X-Amzn-ErrorType", "GoneException")
			w.WriteHeader(http.StatusGone)
			_, _ = w.Write([]byte(`{"message":""}`))
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posts = append(posts, r.URL.Path+" "+string(b))
		mu.Unlock()
	}))
	defer mgmt.Close()
	t.Setenv(apigwmanagement.EnvEndpoint, mgmt.URL+"/live")
	a, sender, err := app.RealtimeFromEnv(context.Background())
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	ctx := context.Background()
	const channel, message = "01JD9N0Z50BAKDWE0FBRMSFD5P", "01JDA0000000000000000000MS"
	for _, id := range []string{"reader", "gone"} {
		if err := a.Store.PutConnection(ctx, realtime.Connection{ID: id, ChannelID: channel, Kind: realtime.KindMember, SubjectID: id, Language: "es-ES", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Store.SaveTranslations(ctx, channel, message, []chat.Translation{{MessageID: message, Language: "es", Content: "La compilación pasó", SourceLanguage: "en", CreatedAt: time.Now()}}, false); err != nil {
		t.Fatal(err)
	}
	ev := wiringtest.Event[events.DynamoDBEvent](t, "realtime-push.json")
	resp, err := a.RealtimePush(sender).HandleStream(ctx, ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("sample: %+v %v, want no failures", resp, err)
	}
	if len(posts) != 2 || !strings.Contains(posts[0], `"type":"message"`) || !strings.Contains(posts[0], `"translated":false`) ||
		!strings.Contains(posts[1], `"type":"message.updated"`) || !strings.Contains(posts[1], `"content":"La compilación pasó"`) {
		t.Fatalf("posts %q, want the original then the Spanish update", posts)
	}
	conns, _ := a.Store.Connections(ctx, channel, time.Now())
	if len(conns) != 1 || conns[0].ID != "reader" {
		t.Fatalf("connections %+v, want the gone one dropped", conns)
	}
}
