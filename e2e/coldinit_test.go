package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/lambdart"
	"github.com/chatbridge/chat/internal/stacktest"
)

// benchCursorKey signs cursors of the functions started for cold init.
const benchCursorKey = "e2e-cold-init-cursor-key-0123456789"

// coldStart is one function, or the minimal binary, to start cold.
type coldStart struct {
	ID  string
	env map[string]string
}

// coldStarts lists every function with its configuration on st, then the
// DynamoDB floor with the first function's, then the minimal aws-lambda-go
// binary, which needs none.
func coldStarts(tb testing.TB, st *stacktest.Stack) []coldStart {
	tb.Helper()
	tmpl := parseTemplate(tb)
	var out []coldStart
	for _, fn := range mk.Functions {
		out = append(out, coldStart{fn.ID, tmpl.functionEnv(tb, fn.ID, stackConfig{Stack: st, CursorKey: benchCursorKey})})
	}
	return append(out, coldStart{floorID, out[0].env}, coldStart{minimalID, map[string]string{"AWS_LAMBDA_FUNCTION_NAME": minimalID}})
}

// initOnce starts bin, waits for its first poll and stops it.
func initOnce(tb testing.TB, bin string, env map[string]string) time.Duration {
	tb.Helper()
	r := lambdart.Start(tb, bin, env)
	defer r.Stop()
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.WaitReady(c); err != nil {
		tb.Fatalf("init: %v", err)
	}
	return r.InitDuration()
}

// TestColdInitReport starts each function with its full configuration,
// which must take it to its first poll of /next (asserted), and logs the
// median of three cold inits beside the host binary's size. The timings are
// only reported, never asserted against a budget: test machines are noisy
// (issue 7); `make bench` prints them against the minimal binary.
func TestColdInitReport(t *testing.T) {
	st := stacktest.New(t)
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-30s %12s %10s\n", "function", "init (p50/3)", "host MiB")
	for _, c := range coldStarts(t, st) {
		bin, b := host.binary(t, c.ID)
		var runs []time.Duration
		for range 3 {
			runs = append(runs, initOnce(t, bin, c.env))
		}
		slices.Sort(runs)
		fmt.Fprintf(&table, "%-30s %12v %10.2f\n", c.ID, runs[1].Round(10*time.Microsecond), float64(b.Size)/(1<<20))
	}
	t.Log(table.String())
}

// BenchmarkColdInit measures each function's cold init (exec to first
// poll of /next, through lambdart) beside the minimal aws-lambda-go
// binary's, built the same way: init-ns/op is the mean init, bytes the
// size of the host binary measured. ns/op also counts starting and
// killing the process.
func BenchmarkColdInit(b *testing.B) {
	st := stacktest.New(b)
	for _, c := range coldStarts(b, st) {
		b.Run(c.ID, func(b *testing.B) {
			bin, built := host.binary(b, c.ID)
			var total time.Duration
			for i := 0; i < b.N; i++ {
				total += initOnce(b, bin, c.env)
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "init-ns/op")
			b.ReportMetric(float64(built.Size), "bytes")
		})
	}
}
