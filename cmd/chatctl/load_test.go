package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/delivering"
	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/awsenv"
)

// TestLoadSmoke runs the load driver's scenarios (a) and (c) at a tiny
// size against a stack of its own (moto_server and chatctl serve started
// and stopped by the driver), and checks what the table is made of: every
// post accepted and pushed to the reader, every edit applied and pushed,
// none lost, and the local AWS's counters read (calls and write units).
func TestLoadSmoke(t *testing.T) {
	// The driver sets these for the stack it starts: restored afterwards.
	for _, k := range []string{awsenv.EnvEndpoint, "ADDR", awsenv.EnvTable, translating.EnvTranslator, translating.EnvApertiumURL,
		app.EnvOutboundAllowCIDRS, delivering.EnvOutboundAllowOnly, awsenv.EnvQueueURL, awsenv.EnvDeliveryQueueURL, awsenv.EnvCursorKey} {
		t.Setenv(k, "")
	}
	logger := slog.Default()
	t.Cleanup(func() { slog.SetDefault(logger) })
	cfg := defaultLoad()
	cfg.Scenarios = []string{"a", "c"}
	cfg.Burst, cfg.Edits, cfg.EditSeconds, cfg.Settle = 40, 30, 1, 15*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	rows, err := load(ctx, cfg, filepath.Join(t.TempDir(), "load.log"), &progress)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, progress.String())
	}
	if len(rows) != 2 {
		t.Fatalf("got %d rows, want 2", len(rows))
	}
	for _, r := range rows {
		want := map[string]int{"a": 4, "c": 3}[r.Name]
		if r.Accepted != want || r.Answers["POST 202"] != want {
			t.Errorf("(%s): %d accepted, answers %v; want %d posts accepted", r.Name, r.Accepted, r.Answers, want)
		}
		if r.Lost != 0 || len(r.Push) != want {
			t.Errorf("(%s): %d pushes seen, %d lost; want %d and none", r.Name, len(r.Push), r.Lost, want)
		}
		if ddb := r.Stats.Ops["DynamoDB.TransactWriteItems"]; ddb.Calls < int64(want) || ddb.WCU < float64(2*want) {
			t.Errorf("(%s): TransactWriteItems %+v; want at least a call and 2 WCU (transactional) per message", r.Name, ddb)
		}
	}
	if c := rows[1]; c.Answers["PATCH 200"] != 3 || len(c.Edit) != 3 {
		t.Errorf("(c): answers %v, %d edit pushes; want 3 edits applied and pushed", c.Answers, len(c.Edit))
	}
	var out bytes.Buffer
	printLoadTable(&out, cfg, rows)
	for _, want := range []string{"| (a) | 4 posts to one webhook in 1 s, 1 reader | POST 202: 4 |", "| (c) |", "k = 10"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
}
