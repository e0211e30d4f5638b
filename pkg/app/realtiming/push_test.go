package realtiming_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"slices"
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
	"golang.org/x/time/rate"
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
	metrics *countingMetrics

	mu          sync.Mutex
	invocations []invocation
	// jobs counts the fan-out workers' invocations (rigConfig.fanout).
	jobs int
	// unordered: await takes each message once in any order (a push
	// retried later may follow a newer message's).
	unordered bool
}

// rigConfig sets up a pushRig: n clients, the gateway's latency and rate
// (PostLimit; nil for none), tune run on the push and its mapping before
// they start, and fanout, which runs RealtimeFanoutFunction's queue
// mapping and hands the push's large audiences and leftovers to it.
type rigConfig struct {
	n         int
	latency   time.Duration
	postLimit *rate.Limiter
	fanout    bool
	tune      func(*realtime.Pusher, *localrun.StreamMapping)
}

// countingMetrics is realtime.Metrics counting by name.
type countingMetrics struct {
	mu sync.Mutex
	n  map[string]int
}

func (m *countingMetrics) Count(_ context.Context, name string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n == nil {
		m.n = map[string]int{}
	}
	m.n[name] += n
}

func (m *countingMetrics) get(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n[name]
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
	// reactions are the reaction pushes' data, in order.
	reactions []reactionPush
}

type reactionPush struct {
	MessageID string `json:"message_id"`
	Emoji     string `json:"emoji"`
	Count     int    `json:"count"`
}

func (c *client) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ids...)
}

func newPushRig(t *testing.T, cfg rigConfig) *pushRig {
	t.Helper()
	n, latency, tune := cfg.n, cfg.latency, cfg.tune
	st, d := wiringtest.Demo(t)
	r := &pushRig{st: st, metrics: &countingMetrics{}}
	// Every connection is a member of the demo channel with a current API
	// token: pushes go only to readers still entitled to the channel.
	user, token := wiringtest.ChannelMember(t, d, channel)
	ids := make(chan string, n)
	g := &wsgateway.Gateway{PostLatency: latency, PostLimit: cfg.postLimit, Routes: map[string]wsgateway.Handler{
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
				var rx struct {
					Type string       `json:"type"`
					Data reactionPush `json:"data"`
				}
				if json.Unmarshal(b, &rx) == nil && rx.Type == "reaction" {
					c.mu.Lock()
					c.reactions = append(c.reactions, rx.Data)
					c.mu.Unlock()
				}
			}
		}()
	}
	tmpl, err := samtemplate.Parse(chatbundle.Template)
	if err != nil {
		t.Fatal(err)
	}
	fanoutQueue := ""
	if cfg.fanout {
		fanoutQueue = r.st.Resources.Queues["RealtimeFanoutQueue"]
		fan := realtiming.Fanout(a, sender, fanoutQueue)
		fan.Runner.(*realtime.Pusher).Metrics = r.metrics
		qm, err := localrun.NewQueueMapping(tmpl, realtiming.RealtimeFanoutFunction, r.st.SQS, fanoutQueue, r.st.Resources.QueueARNs["RealtimeFanoutQueue"],
			func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
				r.mu.Lock()
				r.jobs += len(ev.Records)
				r.mu.Unlock()
				return fan.HandleSQS(ctx, ev)
			})
		if err != nil {
			t.Fatal(err)
		}
		qctx, qcancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { qm.Run(qctx); close(done) }()
		t.Cleanup(func() { qcancel(); <-done })
	}
	h := realtiming.Push(a, sender, fanoutQueue)
	h.Pusher.(*realtime.Pusher).Metrics = r.metrics
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
		got := c.got()
		if r.unordered {
			got, want = slices.Sorted(slices.Values(got)), strings.Join(slices.Sorted(slices.Values(messages)), " ")
		}
		if got := strings.Join(got, " "); got != want {
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
	r := newPushRig(t, rigConfig{n: 200, latency: 20 * time.Millisecond})
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
	r := newPushRig(t, rigConfig{n: 200, latency: 20 * time.Millisecond, tune: func(p *realtime.Pusher, m *localrun.StreamMapping) {
		p.Concurrency = 2
		m.Function.Timeout = 2500 * time.Millisecond
		// A loaded machine posts slower and needs more invocations: let
		// the retries outlast it (a retry from the first record counts).
		m.Source.MaximumRetryAttempts = 20
	}})
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

// TestLargeAudienceIsFannedOutToWorkers: a change with more sends than
// FanoutAbove is handed to the fan-out queue in jobs of JobConnections
// connections, which RealtimeFanoutFunction's mapping runs; every
// connection gets every message exactly once, in order, and the stream
// function itself sent none of them.
func TestLargeAudienceIsFannedOutToWorkers(t *testing.T) {
	r := newPushRig(t, rigConfig{n: 120, fanout: true, tune: func(p *realtime.Pusher, _ *localrun.StreamMapping) {
		p.FanoutAbove, p.JobConnections = 50, 25
	}})
	start := time.Now()
	messages := r.post(t, 3)
	took := r.await(t, messages, start, 60*time.Second)
	r.mu.Lock()
	jobs := r.jobs
	r.mu.Unlock()
	if handed := r.metrics.get(realtime.MetricHandedOff); handed != 360 || jobs < 15 {
		t.Fatalf("%d sends handed off in %d jobs run, want 360 (3 messages × 120) in at least 15 (120 / 25 a job, 3 times)", handed, jobs)
	}
	t.Logf("3 messages to 120 connections through %d fan-out jobs in %v", jobs, took)
}

// TestThrottledPushesAreRetriedNotDropped: API Gateway answers 429
// LimitExceededException past its rate (here 30 posts a second, bursts of
// 5, so many of 100 connections' first posts are refused even after the
// SDK's own retries); every connection still gets every message exactly
// once: a throttled send is counted and retried, by the fan-out workers
// when they run and by the stream's retry of the record when they do not.
// Before, it was logged and counted done: those readers never got it.
func TestThrottledPushesAreRetriedNotDropped(t *testing.T) {
	for _, fanout := range []bool{true, false} {
		t.Run(map[bool]string{true: "fan-out workers", false: "stream retries"}[fanout], func(t *testing.T) {
			r := newPushRig(t, rigConfig{n: 100, postLimit: rate.NewLimiter(30, 5), fanout: fanout, tune: func(_ *realtime.Pusher, m *localrun.StreamMapping) {
				m.Source.MaximumRetryAttempts = 50
			}})
			// A throttled push retried by a worker may arrive after the
			// next message's: clients place views by id (ULIDs sort by
			// time), as the guest page does.
			r.unordered = fanout
			start := time.Now()
			messages := r.post(t, 2)
			took := r.await(t, messages, start, 90*time.Second)
			throttled := r.metrics.get(realtime.MetricThrottled)
			if throttled == 0 {
				t.Fatalf("no send was throttled: the test's rate does not bite")
			}
			if d := r.metrics.get(realtime.MetricDropped); d != 0 {
				t.Fatalf("%d sends dropped, want none", d)
			}
			t.Logf("2 messages to 100 connections at 30 posts a second: %d sends throttled and retried, all delivered once in %v", throttled, took)
		})
	}
}
