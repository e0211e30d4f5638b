package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chatbridge/chat/internal/iampolicy"
	"github.com/chatbridge/chat/internal/motoserver"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/oklog/ulid/v2"
)

// loadScenarios are the scenarios `chatctl load` knows, in the order it
// runs them.
var loadScenarios = []string{"a", "c", "b", "d", "e"}

// loadConfig is what `chatctl load` runs: the scale factor, the scenarios,
// and the sizes at k = 1 (each divided by k, at least 1).
type loadConfig struct {
	K         float64
	Scenarios []string
	// Burst is (a)'s posts in one second; Edits (c)'s posts, each edited
	// once accepted, over EditSeconds; Readers (b)'s WebSocket readers,
	// posted to once a second for ReaderSeconds; Webhooks (d)'s outbound
	// webhooks, half of which time out, posted to once a second for
	// WebhookSeconds; RateLimit (e)'s webhook's rate_limit, posted to at
	// that rate for 2 seconds.
	Burst, Edits, Readers, Webhooks, RateLimit int
	EditSeconds, ReaderSeconds, WebhookSeconds int
	// ReadersOverride, when above 0, is (b)'s number of readers whatever k.
	ReadersOverride int
	// Settle bounds the wait for the pushes and deliveries a scenario's
	// accepted messages owe.
	Settle time.Duration
	// Translator is TRANSLATOR for the run ("none" unless --apertium).
	Translator string
}

// defaultLoad is `chatctl load`'s configuration at k = 1.
func defaultLoad() loadConfig {
	return loadConfig{K: 10, Scenarios: loadScenarios, Burst: 600, Edits: 300, EditSeconds: 3, Readers: 5000, ReaderSeconds: 5,
		Webhooks: 100, WebhookSeconds: 3, RateLimit: 1000, Settle: 30 * time.Second, Translator: translating.TranslatorNone}
}

// scaled is n divided by the configuration's k, at least 1.
func (c loadConfig) scaled(n int) int { return max(1, int(float64(n)/c.K)) }

// readers is (b)'s number of readers: ReadersOverride when set, else
// Readers scaled.
func (c loadConfig) readers() int {
	if c.ReadersOverride > 0 {
		return c.ReadersOverride
	}
	return c.scaled(c.Readers)
}

// runLoad is `chatctl load`: it starts the local stack itself (moto_server
// behind the faithful proxy on a free loopback port, and the service as
// `chatctl serve --throughput K` on another), applies a fixture of its
// own, runs the scenarios and prints a table to stdout; everything it
// started stops when it returns (moto_server by its PID).
func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := defaultLoad()
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Float64Var(&cfg.K, "throughput", cfg.K, "scale factor k: AWS's throughput limits and the scenarios' sizes are divided by it")
	only := fs.String("scenarios", strings.Join(loadScenarios, ","), "the scenarios to run, comma-separated (a burst, c edits, b readers, d timing-out webhooks, e rate-limited webhook)")
	apertium := fs.Bool("apertium", false, "translate with Apertium when it is installed (default: translation off)")
	logFile := fs.String("log", "load.log", "the service's JSON log")
	fs.IntVar(&cfg.ReadersOverride, "readers", 0, "(b)'s WebSocket readers, whatever k (default 5,000 / k)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.K <= 0 {
		return fmt.Errorf("load: --throughput %v: want a factor above 0", cfg.K)
	}
	cfg.Scenarios = nil
	for _, s := range strings.Split(*only, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !containsString(loadScenarios, s) {
			return fmt.Errorf("load: unknown scenario %q (want some of %s)", s, strings.Join(loadScenarios, ","))
		}
		cfg.Scenarios = append(cfg.Scenarios, s)
	}
	if *apertium {
		cfg.Translator = ""
	}
	rows, err := load(ctx, cfg, *logFile, stderr)
	printLoadTable(stdout, cfg, rows)
	return err
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// loadStack is the running local stack of a load run.
type loadStack struct {
	base, realtime string // http://addr, ws://addr/realtime
	aws            string // the faithful proxy's URL
	cfg            loadConfig
	fx             loadFixture
	client         *http.Client
	hooks          *receivers
	progress       io.Writer // stderr
}

// load starts the stack, runs cfg's scenarios and stops the stack.
func load(ctx context.Context, cfg loadConfig, logFile string, stderr io.Writer) ([]loadRow, error) {
	policies, err := iampolicy.Project()
	if err != nil {
		return nil, err
	}
	moto, err := motoserver.Start(ctx, 0, motoserver.WithIAM(motoserver.NewIAM(policies)))
	if err != nil {
		return nil, fmt.Errorf("load: start moto_server: %w", err)
	}
	defer moto.Stop()
	fmt.Fprintf(stderr, "chatctl load: moto_server pid %d behind %s (stopped on exit)\n", moto.PID(), moto.URL)
	port, err := motoserver.FreePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for k, v := range map[string]string{
		awsenv.EnvEndpoint: moto.URL, "ADDR": addr, awsenv.EnvTable: "load",
		translating.EnvTranslator: cfg.Translator, app.EnvOutboundAllowCIDRS: "127.0.0.0/8",
		delivering.EnvOutboundAllowOnly: "true", awsenv.EnvQueueURL: "", awsenv.EnvDeliveryQueueURL: "",
	} {
		if err := os.Setenv(k, v); err != nil {
			return nil, err
		}
	}
	hooks, err := startReceivers(cfg.scaled(cfg.Webhooks))
	if err != nil {
		return nil, err
	}
	defer hooks.close()

	serveCtx, stopServe := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() {
		served <- runServe(serveCtx, []string{"--throughput", strconv.FormatFloat(cfg.K, 'g', -1, 64), "--log", logFile}, io.Discard, stderr)
	}()
	defer func() {
		stopServe()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
		}
	}()
	s := &loadStack{base: "http://" + addr, realtime: "ws://" + addr + realtimePath, aws: moto.URL, cfg: cfg, hooks: hooks, progress: stderr,
		client: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}
	if err := s.waitServing(ctx, served); err != nil {
		return nil, err
	}
	// Setup (the fixture, the readers' subscriptions) runs with DynamoDB's
	// limits off; each scenario's measured part with them on.
	if err := motoserver.SetLimits(ctx, moto.URL, motoserver.Override{}); err != nil {
		return nil, err
	}
	if s.fx, err = s.applyFixture(ctx); err != nil {
		return nil, err
	}
	var rows []loadRow
	for _, name := range cfg.Scenarios {
		if ctx.Err() != nil {
			return rows, ctx.Err()
		}
		fmt.Fprintf(stderr, "chatctl load: scenario (%s)\n", name)
		row, err := s.run(ctx, name)
		if err != nil {
			return rows, fmt.Errorf("load: scenario (%s): %w", name, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// waitServing waits until the service answers, or serve fails.
func (s *loadStack) waitServing(ctx context.Context, served <-chan error) error {
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := s.client.Get(s.base + "/openapi.yaml")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case err := <-served:
			return fmt.Errorf("load: chatctl serve exited: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("load: chatctl serve not answering after 90 s")
		}
	}
}

// loadFixture is what the run's fixture holds: a workspace per kind of
// scenario, so that one's events never reach another's webhooks.
type loadFixture struct {
	// Main is (a)'s and (c)'s workspace, one reader; Readers (b)'s, its
	// channel's many members; Deliver has (d)'s outbound webhooks; Limited
	// (e)'s rate-limited one.
	Main, Readers, Deliver, Limited loadWorkspace
}

// loadWorkspace is one workspace of the fixture.
type loadWorkspace struct {
	ID, Channel, Webhook, Secret string
	// Tokens are the channel's members' API tokens.
	Tokens []string
}

func newLoadWorkspace(name string, members int) loadWorkspace {
	w := loadWorkspace{ID: ulid.Make().String(), Channel: ulid.Make().String(), Webhook: ulid.Make().String(),
		Secret: "whsec_load_" + strings.ToLower(ulid.Make().String())}
	for i := range members {
		w.Tokens = append(w.Tokens, fmt.Sprintf("wsk_load_%s_%06d", strings.ToLower(name), i))
	}
	return w
}

// document is w as a workspace of the fixture file, with outbound webhooks.
func (w loadWorkspace) document(name string, outbound []map[string]any) map[string]any {
	var users []map[string]any
	var members []string
	for i, tok := range w.Tokens {
		id := ulid.Make().String()
		users = append(users, map[string]any{"id": id, "name": fmt.Sprintf("%s reader %d", name, i), "preferred_language": "en",
			"api_token": tok, "role": "member"})
		members = append(members, id)
	}
	doc := map[string]any{
		"id": w.ID, "name": name, "default_language": "en", "webhook_quota_per_minute": fixture.MaxQuota,
		"users":    users,
		"channels": []map[string]any{{"id": w.Channel, "name": "load", "members": members}},
		"inbound_webhooks": []map[string]any{{"id": w.Webhook, "channel_id": w.Channel, "bot_name": name + " bot",
			"secret": w.Secret, "signature_required": false, "enabled": true}},
	}
	if outbound != nil {
		doc["outbound_webhooks"] = outbound
	}
	return doc
}

// applyFixture applies the run's workspaces through `chatctl apply`.
func (s *loadStack) applyFixture(ctx context.Context) (loadFixture, error) {
	readers := 1
	if containsString(s.cfg.Scenarios, "b") {
		readers = s.cfg.readers()
	}
	fx := loadFixture{Main: newLoadWorkspace("Main", 1), Readers: newLoadWorkspace("Readers", readers),
		Deliver: newLoadWorkspace("Deliver", 1), Limited: newLoadWorkspace("Limited", 1)}
	var deliver []map[string]any
	for i := range s.hooks.n {
		deliver = append(deliver, map[string]any{"name": fmt.Sprintf("receiver %d", i), "url": s.hooks.url(i),
			"events": []string{"message.created"}, "active": true})
	}
	limited := []map[string]any{{"name": "rate-limited", "url": s.hooks.url(s.hooks.n), "events": []string{"message.created"},
		"active": true, "rate_limit": s.cfg.scaled(s.cfg.RateLimit)}}
	doc, err := json.Marshal(map[string]any{"workspaces": []any{
		fx.Main.document("Main", nil), fx.Readers.document("Readers", nil), fx.Deliver.document("Deliver", deliver), fx.Limited.document("Limited", limited)}})
	if err != nil {
		return fx, err
	}
	if err := runApply(ctx, []string{"-"}, strings.NewReader(string(doc)), io.Discard, io.Discard); err != nil {
		return fx, fmt.Errorf("load: apply the fixture: %w", err)
	}
	return fx, nil
}

// receivers are the outbound webhooks' local endpoints: n of them, the
// first half answering at once, the second half never within the
// delivery's 10 s (they time out), and one more (index n) answering at
// once, for (e).
type receivers struct {
	n   int
	srv *http.Server
	ln  net.Listener

	mu   sync.Mutex
	got  map[int]map[string]time.Time // receiver → message id → first delivery
	hold chan struct{}                // closed to release the slow ones
}

func startReceivers(n int) (*receivers, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receivers{n: n, ln: ln, got: map[int]map[string]time.Time{}, hold: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hook/{i}", r.serve)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receivers) url(i int) string { return fmt.Sprintf("http://%s/hook/%d", r.ln.Addr(), i) }

// slow reports whether receiver i times out.
func (r *receivers) slow(i int) bool { return i < r.n && i >= (r.n+1)/2 }

func (r *receivers) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	i, err := strconv.Atoi(req.PathValue("i"))
	if err != nil {
		http.NotFound(w, req)
		return
	}
	// message.created carries the message as its data (room.message_created
	// as data.message).
	var env struct {
		Data struct {
			ID      string
			Message struct{ ID string } `json:"message"`
		} `json:"data"`
	}
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	_ = json.Unmarshal(body, &env)
	id := env.Data.ID
	if id == "" {
		id = env.Data.Message.ID
	}
	if r.slow(i) {
		select {
		case <-req.Context().Done():
		case <-r.hold:
		case <-time.After(30 * time.Second):
		}
		return
	}
	r.mu.Lock()
	if r.got[i] == nil {
		r.got[i] = map[string]time.Time{}
	}
	if _, ok := r.got[i][id]; !ok {
		r.got[i][id] = at
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// deliveredAt is when receiver i first got message id's event.
func (r *receivers) deliveredAt(i int, id string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.got[i][id]
	return t, ok
}

// perSecond is the most deliveries receiver i got within one second.
func (r *receivers) perSecond(i int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	counts := map[int64]int{}
	most := 0
	for _, t := range r.got[i] {
		s := t.Unix()
		counts[s]++
		most = max(most, counts[s])
	}
	return most
}

func (r *receivers) close() {
	close(r.hold)
	_ = r.srv.Close()
}
