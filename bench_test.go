package chatbundle_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// requestBenchPackages are the packages of make bench whose benchmarks
// serve requests through httpapi's middleware, which logs one line per
// request: the hot paths (docs/performance.md).
var requestBenchPackages = []string{"./pkg/roomsapi", "./pkg/membersapi", "./pkg/httpapi"}

// benchResult returns the name of a benchmark result line in the format
// benchstat reads (golang.org/x/perf/benchfmt): the name, the iterations,
// then value and unit pairs. ok is false for any other line, one that a
// log line cut in two among them.
func benchResult(line string) (name string, ok bool) {
	f := strings.Fields(line)
	if len(f) < 4 || len(f)%2 != 0 || !strings.HasPrefix(f[0], "Benchmark") {
		return "", false
	}
	if n, err := strconv.Atoi(f[1]); err != nil || n < 1 {
		return "", false
	}
	for i := 2; i < len(f); i += 2 {
		if _, err := strconv.ParseFloat(f[i], 64); err != nil {
			return "", false
		}
	}
	return f[0], true
}

func TestBenchResultParsesWhatBenchstatReads(t *testing.T) {
	cases := []struct {
		line string
		want string
	}{
		{"BenchmarkJoin-2   \t   1000\t    423414 ns/op\t   33752 B/op\t     390 allocs/op", "BenchmarkJoin-2"},
		{"BenchmarkDeliveries/all-answer-2 \t 1\t 4940949 ns/op\t 2024 deliveries/s", "BenchmarkDeliveries/all-answer-2"},
		// The line make bench printed before: the name, then a request log.
		{`BenchmarkJoin-2   	2026/11/28 04:28:51 INFO request request_id=970c4f0b method=POST status=201`, ""},
		{"BenchmarkJoin-2", ""},
		{"--- FAIL: BenchmarkJoin", ""},
		{"BenchmarkJoin-2 \t 0 \t 12 ns/op", ""},
	}
	for _, c := range cases {
		if got, _ := benchResult(c.line); got != c.want {
			t.Errorf("benchResult(%q): got %q, want %q", c.line, got, c.want)
		}
	}
}

// TestRequestBenchmarksPrintBenchstatLines runs the benchmarks of
// requestBenchPackages as make bench does, two iterations each (the first
// one alone runs before the result line starts, so one would hide what the
// later ones write), and checks that each benchmark function (found by
// Go's parser) printed a result line that benchstat can read: a request
// log written to the test's output interleaves with it and loses it.
func TestRequestBenchmarksPrintBenchstatLines(t *testing.T) {
	var want []string
	for _, pkg := range requestBenchPackages {
		files, err := filepath.Glob(filepath.Join(pkg, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Benchmark") {
					want = append(want, fn.Name.Name)
				}
			}
		}
	}
	if len(want) < 3 {
		t.Fatalf("found %d benchmarks in %v, want the hot paths' (BenchmarkJoin...)", len(want), requestBenchPackages)
	}
	args := append([]string{"test", "-run=^$", "-bench=.", "-benchmem", "-count=1", "-benchtime=2x"}, requestBenchPackages...)
	cmd := exec.Command("go", args...)
	// The child's benchmarks log as they would under make bench.
	cmd.Env = append(os.Environ(), "TEST_LOG=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	got := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if name, ok := benchResult(line); ok {
			got[strings.SplitN(name, "/", 2)[0]] = true
		}
	}
	for _, b := range want {
		// The name in a result line carries -GOMAXPROCS, or /sub for b.Run's.
		found := false
		for name := range got {
			if name == b || strings.HasPrefix(name, b+"-") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s printed no result line benchstat can read", b)
		}
	}
	if t.Failed() {
		t.Logf("go %s:\n%s", strings.Join(args, " "), out)
	}
}
