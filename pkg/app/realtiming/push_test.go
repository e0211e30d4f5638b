package realtiming_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/internal/wsgateway"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/realtiming"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/realtime"
	"github.com/chatbridge/chat/pkg/wsapi"
	"github.com/coder/websocket"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m)) }

const channel = "01JD9N0Z50BAKDWE0FBRMSFD5P"

// pushRig is RealtimePushFunction as the local run runs it: its stream
// mapping from template.yaml (batch size, timeout, partial responses), its
// handler built by FromEnv, and the WebSocket gateway answering every
// PostToConnection after latency, with n subscribed clients.
type pushRig struct {
	st      *stacktest.Stack
	a       *app.App
	clients []*client
	mapping *localrun.StreamMapping

	mu          sync.Mutex
	invocations []invocation
}

type invocation struct {
	records, failures int
	took              time.Duration
	err               error
}

// client is one WebSocket connection and the message ids pushed to it.
type client struct {
	ws  *websocket.Conn
	mu  sync.Mutex
	ids []string
}

func (c *client) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ids...)
}

func newPushRig(t *testing.T, n int, latency time.Duration, tune func(*realtime.Pusher, *localrun.StreamMapping)) *pushRig {
	t.Helper()
	st, d := wiringtest.Demo(t)
	r := &pushRig{st: st}
	// Every connection is a member of the demo channel with a current API
	// token: pushes go only to readers still entitled to the channel.
	user, token := wiringtest.ChannelMember(t, d, channel)
	ids := make(chan string, n)
	g := &wsgateway.Gateway{PostLatency: latency, Routes: map[string]wsgateway.Handler{
		"$default": func(_ context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
			ids <- ev.RequestContext.ConnectionID
			return events.APIGatewayProxyResponse{StatusCode: 200}, nil
		}}}
	wsSrv, mgmt := httptest.NewServer(g), httptest.NewServer(g.Management())
	t.Cleanup(wsSrv.Close)
	t.Cleanup(mgmt.Close)
	t.Setenv(awsenv.EnvTable, r.st.Table)
	t.Setenv(wsapi.EnvManagementEndpoint, mgmt.URL+"/live")
	a, sender, err := realtiming.FromEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r.a = a
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for range n {
		ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(wsSrv.URL, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.CloseNow() })
		if err := ws.Write(ctx, websocket.MessageText, []byte(`{"action":"hello"}`)); err != nil {
			t.Fatal(err)
		}
		id := <-ids
		if err := storetest.New(a.DB, a.Table).Conns.PutConnection(ctx, realtime.Connection{ID: id, ChannelID: channel, Kind: realtime.KindMember, SubjectID: user,
			Token: token, Language: "en", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		c := &client{ws: ws}
		r.clients = append(r.clients, c)
		go func() {
			for {
				_, b, err := ws.Read(ctx)
				if err != nil {
					return
				}
				var f struct {
					Type string `json:"type"`
					Data struct {
						ID string `json:"id"`
					} `json:"data"`
				}
				if json.Unmarshal(b, &f) == nil && f.Type == "message" {
					c.mu.Lock()
					c.ids = append(c.ids, f.Data.ID)
					c.mu.Unlock()
				}
			}
		}()
	}
	tmpl, err := samtemplate.Parse(chatbundle.Template)
	if err != nil {
		t.Fatal(err)
	}
	h := realtiming.Push(a, sender)
	m, err := localrun.NewStreamMapping(tmpl, realtiming.RealtimePushFunction, dynamodbstreams.NewFromConfig(r.st.AWS), r.st.SQS, r.st.Resources,
		func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			start := time.Now()
			resp, err := h.HandleStream(ctx, ev)
			r.mu.Lock()
			r.invocations = append(r.invocations, invocation{records: len(ev.Records), failures: len(resp.BatchItemFailures), took: time.Since(start), err: err})
			r.mu.Unlock()
			return resp, err
		})
	if err != nil {
		t.Fatal(err)
	}
	m.Poll = 20 * time.Millisecond
	if tune != nil {
		tune(h.Pusher.(*realtime.Pusher), m)
	}
	done, err := m.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
	r.mapping = m
	return r
}

// post stores messages on the channel and returns their ids.
func (r *pushRig) post(t *testing.T, n int) []string {
	t.Helper()
	ids := chat.NewIDs()
	var out []string
	for range n {
		now := time.Now().UTC()
		m := chat.Message{ID: ids.New(now), WorkspaceID: "01JD9N0V80G9T6DXN5EAY6K8H4", ChannelID: channel, Content: "hello",
			Author:         chat.Author{Type: chat.AuthorGuest, ID: ids.New(now), Name: "Ana", Language: "en"},
			SourceLanguage: "en", Status: chat.MessageQueued, CreatedAt: now}
		if err := storetest.New(r.a.DB, r.a.Table).PutMessage(context.Background(), m); err != nil {
			t.Fatalf("put message: %v", err)
		}
		out = append(out, m.ID)
	}
	return out
}

// await waits until every client has had every message pushed (or
// within), then 300 ms more, and checks each got each exactly once, in
// order. It returns the time until the last push arrived.
func (r *pushRig) await(t *testing.T, messages []string, start time.Time, within time.Duration) time.Duration {
	t.Helper()
	var last time.Duration
	for {
		complete := true
		for _, c := range r.clients {
			if len(c.got()) < len(messages) {
				complete = false
				break
			}
		}
		if complete {
			last = time.Since(start)
			break
		}
		if time.Since(start) > within {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	want := strings.Join(messages, " ")
	for i, c := range r.clients {
		if got := strings.Join(c.got(), " "); got != want {
			t.Fatalf("client %d got pushes [%s], want each message once, in order: [%s] (invocations %+v)", i, got, want, r.invocationLog())
		}
	}
	return last
}

func (r *pushRig) invocationLog() []invocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]invocation(nil), r.invocations...)
}

// TestPushTo200ConnectionsWithinTheTimeout: RealtimePushFunction, as the
// local poller runs it with its template settings, pushes each of 3
// messages exactly once to each of 200 connections whose PostToConnection
// takes 20 ms. The time is measured and logged, not asserted.
func TestPushTo200ConnectionsWithinTheTimeout(t *testing.T) {
	r := newPushRig(t, 200, 20*time.Millisecond, nil)
	start := time.Now()
	messages := r.post(t, 3)
	took := r.await(t, messages, start, 30*time.Second)
	var slowest time.Duration
	for _, inv := range r.invocationLog() {
		slowest = max(slowest, inv.took)
	}
	t.Logf("200 connections at 20 ms a post, %d in flight: 3 messages pushed to all in %v; slowest invocation %v of the %v timeout; invocations %+v",
		realtime.DefaultConcurrency, took, slowest, r.mapping.Function.Timeout, r.invocationLog())
}

// TestPushTooLargeForOneInvocationIsRetriedWithoutDuplicates: with 2 posts
// in flight and a 2.5 s timeout, one message to 200 connections at 20 ms
// (2 s of posts) cannot finish in one invocation: the handler stops a
// second before its deadline, reports the record, and the mapping's retry
// pushes only to the connections still missing it. No invocation times
// out; every connection gets the message once.
func TestPushTooLargeForOneInvocationIsRetriedWithoutDuplicates(t *testing.T) {
	r := newPushRig(t, 200, 20*time.Millisecond, func(p *realtime.Pusher, m *localrun.StreamMapping) {
		p.Concurrency = 2
		m.Function.Timeout = 2500 * time.Millisecond
		// A loaded machine posts slower and needs more invocations: let
		// the retries outlast it (a retry from the first record counts).
		m.Source.MaximumRetryAttempts = 20
	})
	start := time.Now()
	messages := r.post(t, 1)
	took := r.await(t, messages, start, 30*time.Second)
	log := r.invocationLog()
	if len(log) < 2 || log[0].failures != 1 {
		t.Fatalf("invocations %+v, want the first to report its record unfinished and a retry", log)
	}
	for _, inv := range log {
		if inv.took >= 2500*time.Millisecond || inv.err != nil {
			t.Fatalf("invocation %+v: want each to return before its 2.5 s timeout, without error", inv)
		}
	}
	t.Logf("one message to 200 connections over %d invocations in %v: %+v", len(log), took, log)
}
