package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/chatbridge/chat/internal/localrun"
	"github.com/chatbridge/chat/internal/motoserver"
)

// servedThrottles is the account's limits the running `chatctl serve`
// keeps (nil when none), so that a load run reads Lambda's throttles.
var servedThrottles atomic.Pointer[localrun.Throttles]

// loadRow is what one scenario measured.
type loadRow struct {
	Name, Load string
	// Answers counts the HTTP answers by request kind and status
	// ("POST 202").
	Answers map[string]int
	// Accept is each accepted post's latency (request to 202); Push from
	// each 202 to each reader's push; Edit from each edit's 200 to each
	// reader's message.updated push; Delivery from each 202 to each
	// delivery to a receiver that answers.
	Accept, Push, Edit, Delivery []time.Duration
	// Accepted counts the accepted messages; Lost the pushes or deliveries
	// owed and never seen within the settle time.
	Accepted, Lost int
	Stats          motoserver.Stats
	// LambdaThrottles counts invocations past the account's concurrency.
	LambdaThrottles int64
	Note            string
}

// answersMu guards every loadRow's Answers: a scenario's posts and its
// edits are counted from different goroutines.
var answersMu sync.Mutex

// answer counts one answer of kind ("POST 202").
func (r *loadRow) answer(kind string) {
	answersMu.Lock()
	defer answersMu.Unlock()
	r.Answers[kind]++
}

// reader is one WebSocket connection subscribed to a channel, noting when
// each message's pushes arrive.
type reader struct {
	conn *websocket.Conn
	mu   sync.Mutex
	msg  map[string]time.Time // message id → its "message" push
	upd  map[string]time.Time // message id → its first "message.updated" push at revision 2 or more
}

// subscribe connects a reader to w's channel as the member with token.
func (s *loadStack) subscribe(ctx context.Context, w loadWorkspace, token string) (*reader, error) {
	dial, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c, _, err := websocket.Dial(dial, s.realtime, nil)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	sub, _ := json.Marshal(map[string]string{"action": "subscribe", "token": token, "workspace_id": w.ID, "channel_id": w.Channel})
	if err := c.Write(dial, websocket.MessageText, sub); err != nil {
		c.CloseNow()
		return nil, err
	}
	for {
		_, data, err := c.Read(dial)
		if err != nil {
			c.CloseNow()
			return nil, err
		}
		var f struct{ Type, Code string }
		_ = json.Unmarshal(data, &f)
		if f.Type == "subscribed" {
			break
		}
		if f.Type == "error" {
			c.CloseNow()
			return nil, fmt.Errorf("subscribe: %s", f.Code)
		}
	}
	r := &reader{conn: c, msg: map[string]time.Time{}, upd: map[string]time.Time{}}
	go r.read(ctx)
	return r, nil
}

func (r *reader) read(ctx context.Context) {
	for {
		_, data, err := r.conn.Read(ctx)
		at := time.Now()
		if err != nil {
			return
		}
		var f struct {
			Type string
			Data struct {
				ID       string
				Revision int
			}
		}
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		r.mu.Lock()
		switch {
		case f.Type == "message":
			if _, ok := r.msg[f.Data.ID]; !ok {
				r.msg[f.Data.ID] = at
			}
		case f.Type == "message.updated" && f.Data.Revision >= 2:
			if _, ok := r.upd[f.Data.ID]; !ok {
				r.upd[f.Data.ID] = at
			}
		}
		r.mu.Unlock()
	}
}

func (r *reader) pushed(id string, edit bool) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if edit {
		t, ok := r.upd[id]
		return t, ok
	}
	t, ok := r.msg[id]
	return t, ok
}

// subscribeAll subscribes a reader per token, 8 at a time, telling
// progress of every 100th.
func (s *loadStack) subscribeAll(ctx context.Context, w loadWorkspace, tokens []string, progress io.Writer) ([]*reader, error) {
	readers := make([]*reader, len(tokens))
	errs := make([]error, len(tokens))
	// Few at a time: each subscription must end within the gateway's 30 s.
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	var done atomic.Int64
	start := time.Now()
	for i, tok := range tokens {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			readers[i], errs[i] = s.subscribe(ctx, w, tok)
			if n := done.Add(1); n%100 == 0 {
				fmt.Fprintf(progress, "chatctl load: %d of %d readers subscribed (%.0f s)\n", n, len(tokens), time.Since(start).Seconds())
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			closeReaders(readers)
			return nil, err
		}
	}
	return readers, nil
}

func closeReaders(rs []*reader) {
	for _, r := range rs {
		if r != nil {
			r.conn.Close(websocket.StatusNormalClosure, "")
		}
	}
}

// posted is one accepted post: its message id and when its 202 arrived.
type posted struct {
	id string
	at time.Time
}

// post sends rate posts a second for d to w's inbound webhook (vegeta's
// constant pacer), counting the answers into row; each accepted post is
// given to accepted as its answer arrives.
func (s *loadStack) post(w loadWorkspace, scenario string, rate int, d time.Duration, row *loadRow, accepted func(posted)) {
	var seq atomic.Int64
	url := s.base + "/webhooks/" + w.Webhook + "/messages"
	header := http.Header{"Content-Type": {"application/json"}, "X-Service-Webhook-Secret": {w.Secret}}
	targeter := func(t *vegeta.Target) error {
		t.Method, t.URL, t.Header = http.MethodPost, url, header
		t.Body = fmt.Appendf(nil, `{"content":"load (%s) message %d"}`, scenario, seq.Add(1))
		return nil
	}
	atk := vegeta.NewAttacker(vegeta.Timeout(60*time.Second), vegeta.KeepAlive(true), vegeta.Workers(16))
	for res := range atk.Attack(targeter, vegeta.Rate{Freq: rate, Per: time.Second}, d, scenario) {
		row.answer(fmt.Sprintf("POST %d", res.Code))
		if res.Code != http.StatusAccepted {
			continue
		}
		var out struct{ Data struct{ ID string } }
		if json.Unmarshal(res.Body, &out) != nil || out.Data.ID == "" {
			continue
		}
		row.Accepted++
		row.Accept = append(row.Accept, res.Latency)
		accepted(posted{out.Data.ID, res.End()})
	}
}

// measured runs load with DynamoDB's limits on, then waits until done
// reports all owed pushes and deliveries arrived (or the settle time
// ends), and notes the AWS calls and Lambda throttles in between.
func (s *loadStack) measured(ctx context.Context, row *loadRow, load func(), done func() bool) error {
	if err := motoserver.SetLimits(ctx, s.aws, motoserver.Override{Throughput: s.cfg.K}); err != nil {
		return err
	}
	defer motoserver.SetLimits(context.WithoutCancel(ctx), s.aws, motoserver.Override{})
	before, err := motoserver.ReadStats(ctx, s.aws)
	if err != nil {
		return err
	}
	throttled := func() int64 {
		if t := servedThrottles.Load(); t != nil {
			return t.Concurrency.Throttled()
		}
		return 0
	}
	lambda := throttled()
	load()
	for deadline := time.Now().Add(s.cfg.Settle); !done() && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(100 * time.Millisecond)
	}
	after, err := motoserver.ReadStats(ctx, s.aws)
	if err != nil {
		return err
	}
	row.Stats = after.Sub(before)
	row.LambdaThrottles = throttled() - lambda
	return nil
}

// pushes notes, for each accepted message and reader, its push's latency
// (edit: the edit's message.updated push after the edit's 200), and counts
// what never came.
func pushes(row *loadRow, readers []*reader, msgs []posted, edit bool) {
	for _, m := range msgs {
		for _, r := range readers {
			t, ok := r.pushed(m.id, edit)
			switch {
			case !ok:
				row.Lost++
			case edit:
				row.Edit = append(row.Edit, t.Sub(m.at))
			default:
				row.Push = append(row.Push, t.Sub(m.at))
			}
		}
	}
}

// allPushed reports whether every reader has every message's push.
func allPushed(readers []*reader, msgs func() []posted, edit bool) func() bool {
	return func() bool {
		for _, m := range msgs() {
			for _, r := range readers {
				if _, ok := r.pushed(m.id, edit); !ok {
					return false
				}
			}
		}
		return true
	}
}

// collector gathers accepted posts from the attack's goroutine.
type collector struct {
	mu   sync.Mutex
	list []posted
}

func (c *collector) add(p posted) {
	c.mu.Lock()
	c.list = append(c.list, p)
	c.mu.Unlock()
}

func (c *collector) all() []posted {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.list)
}

// run runs the scenario called name.
func (s *loadStack) run(ctx context.Context, name string) (loadRow, error) {
	row := loadRow{Name: name, Answers: map[string]int{}}
	w := s.fx.Main
	switch name {
	case "a", "b", "c":
		n := 1
		if name == "b" {
			w = s.fx.Readers
			n = len(w.Tokens)
		}
		start := time.Now()
		readers, err := s.subscribeAll(ctx, w, w.Tokens[:n], s.progress)
		if err != nil {
			return row, fmt.Errorf("subscribe %d readers: %w", n, err)
		}
		if name == "b" {
			row.Note = fmt.Sprintf("%d subscriptions took %.1f s (limits off)", n, time.Since(start).Seconds())
		}
		defer closeReaders(readers)
		var got, edited collector
		switch name {
		case "a":
			rate := s.cfg.scaled(s.cfg.Burst)
			row.Load = fmt.Sprintf("%d posts to one webhook in 1 s, 1 reader", rate)
			err = s.measured(ctx, &row, func() { s.post(w, name, rate, time.Second, &row, got.add) }, allPushed(readers, got.all, false))
		case "b":
			row.Load = fmt.Sprintf("%d readers (WebSocket), 1 post/s for %d s", n, s.cfg.ReaderSeconds)
			err = s.measured(ctx, &row, func() {
				s.post(w, name, 1, time.Duration(s.cfg.ReaderSeconds)*time.Second, &row, got.add)
			}, allPushed(readers, got.all, false))
		case "c":
			total := s.cfg.scaled(s.cfg.Edits)
			rate := max(1, total/s.cfg.EditSeconds)
			row.Load = fmt.Sprintf("%d posts/s for %d s, each edited (PATCH) on its 202, 1 reader", rate, s.cfg.EditSeconds)
			var edits sync.WaitGroup
			err = s.measured(ctx, &row, func() {
				s.post(w, name, rate, time.Duration(s.cfg.EditSeconds)*time.Second, &row, func(p posted) {
					got.add(p)
					edits.Go(func() {
						code, at := s.edit(ctx, w, p.id)
						row.answer(fmt.Sprintf("PATCH %d", code))
						if code == http.StatusOK {
							edited.add(posted{p.id, at})
						}
					})
				})
				edits.Wait()
			}, func() bool { return allPushed(readers, got.all, false)() && allPushed(readers, edited.all, true)() })
			pushes(&row, readers, edited.all(), true)
			row.Note = fmt.Sprintf("lost counts %d edits' pushes too", len(edited.all()))
		}
		if err != nil {
			return row, err
		}
		pushes(&row, readers, got.all(), false)
	case "d", "e":
		var got collector
		var good []int
		w, rate, seconds := s.fx.Deliver, 1, s.cfg.WebhookSeconds
		if name == "d" {
			for i := range s.hooks.n {
				if !s.hooks.slow(i) {
					good = append(good, i)
				}
			}
			row.Load = fmt.Sprintf("%d outbound webhooks (%d time out), 1 post/s for %d s", s.hooks.n, s.hooks.n-len(good), seconds)
		} else {
			w, good, seconds = s.fx.Limited, []int{s.hooks.n}, 2
			limit := s.cfg.scaled(s.cfg.RateLimit)
			rate = limit
			row.Load = fmt.Sprintf("1 outbound webhook at rate_limit %d, %d posts/s for %d s", limit, rate, seconds)
		}
		delivered := func() bool {
			for _, m := range got.all() {
				for _, i := range good {
					if _, ok := s.hooks.deliveredAt(i, m.id); !ok {
						return false
					}
				}
			}
			return true
		}
		if err := s.measured(ctx, &row, func() { s.post(w, name, rate, time.Duration(seconds)*time.Second, &row, got.add) }, delivered); err != nil {
			return row, err
		}
		for _, m := range got.all() {
			for _, i := range good {
				if t, ok := s.hooks.deliveredAt(i, m.id); ok {
					row.Delivery = append(row.Delivery, t.Sub(m.at))
				} else {
					row.Lost++
				}
			}
		}
		if name == "e" {
			row.Note = fmt.Sprintf("at most %d deliveries in one second (rate_limit %d)", s.hooks.perSecond(s.hooks.n), s.cfg.scaled(s.cfg.RateLimit))
		} else {
			row.Note = "lost: deliveries owed to the answering half"
		}
	default:
		return row, fmt.Errorf("unknown scenario %q", name)
	}
	return row, nil
}

// edit changes message id through w's webhook, and returns the answer's
// status and when it arrived.
func (s *loadStack) edit(ctx context.Context, w loadWorkspace, id string) (int, time.Time) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, s.base+"/webhooks/"+w.Webhook+"/messages/"+id,
		strings.NewReader(`{"content":"load (c) edited"}`))
	if err != nil {
		return 0, time.Now()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Webhook-Secret", w.Secret)
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, time.Now()
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, time.Now()
}

// percentiles is "p50 / p99" of ds, in milliseconds.
func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "–"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[int(q*float64(len(s)-1)+0.5)] }
	return fmt.Sprintf("%d / %d", at(0.50).Milliseconds(), at(0.99).Milliseconds())
}

// printLoadTable writes the rows as a Markdown table, then what each
// column means.
func printLoadTable(w io.Writer, cfg loadConfig, rows []loadRow) {
	fmt.Fprintf(w, "\nchatctl load: k = %v (AWS's limits and the sizes divided by it)\n\n", cfg.K)
	fmt.Fprintln(w, "| scenario | load | answers | 202 ms p50 / p99 | 202→push ms p50 / p99 | edit→push ms p50 / p99 | 202→delivery ms p50 / p99 | lost | DynamoDB calls / msg | SQS calls / msg | WCU / msg | RCU / msg | DynamoDB throttled | Lambda throttled | note |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		var answers []string
		for _, k := range sortedAnswerKeys(r.Answers) {
			answers = append(answers, fmt.Sprintf("%s: %d", k, r.Answers[k]))
		}
		var ddb, sqs motoserver.OpStats
		for op, o := range r.Stats.Ops {
			switch {
			case strings.HasPrefix(op, "DynamoDB."):
				ddb.Calls += o.Calls
				ddb.Throttled += o.Throttled
				ddb.WCU += o.WCU
				ddb.RCU += o.RCU
			case strings.HasPrefix(op, "SQS."):
				sqs.Calls += o.Calls
			}
		}
		per := func(v float64) string {
			if r.Accepted == 0 {
				return "–"
			}
			return fmt.Sprintf("%.1f", v/float64(r.Accepted))
		}
		fmt.Fprintf(w, "| (%s) | %s | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s | %d | %d | %s |\n", r.Name, r.Load, strings.Join(answers, ", "),
			percentiles(r.Accept), percentiles(r.Push), percentiles(r.Edit), percentiles(r.Delivery), r.Lost,
			per(float64(ddb.Calls)), per(float64(sqs.Calls)), per(ddb.WCU), per(ddb.RCU), ddb.Throttled, r.LambdaThrottles, r.Note)
	}
	fmt.Fprintln(w, "\nPer message: AWS calls and capacity units from the local AWS's counters (/_local-aws/stats) over the scenario, pollers included, divided by the accepted messages; DynamoDB Streams reads are left out (free to Lambda).")
}

func sortedAnswerKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
