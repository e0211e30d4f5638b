package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/stacktest"
)

// root is the repository root, where the Makefile runs.
var root = func() string {
	dir, err := filepath.Abs("..")
	if err != nil {
		panic(err)
	}
	return dir
}()

// minimalID names testdata/minimal among the host builds: a bare
// lambda.Start, the baseline of every cold init.
const minimalID = "minimal"

// floorID names testdata/dynamodb-floor: the minimal function plus a
// DynamoDB client, the floor of a function with a table.
const floorID = "dynamodb-floor"

// baselineIDs are the host builds beside the functions, under testdata/.
var baselineIDs = []string{floorID, minimalID}

var (
	mk   *makefile // ../Makefile
	host *buildSet // every function, and testdata/minimal, for the host
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if mk, err = parseMakefile(filepath.Join(root, "Makefile")); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "e2e-bootstrap-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// The builds run while moto_server starts; tests wait for the binary
	// they need, and the directory goes only after every build is done.
	host = buildAll(mk, runtime.GOOS, runtime.GOARCH, dir, true)
	defer host.wait()
	return stacktest.Main(m)
}

// function is one entry of the Makefile's FUNCTIONS: a template logical id
// and its directory under functions/.
type function struct {
	ID, Dir string
}

// makefile is what the tests read from the Makefile.
type makefile struct {
	Functions []function
	// LambdaEnv is LAMBDA_ENV, the build's environment (GOOS=linux ...).
	LambdaEnv []string
	// LambdaFlags is LAMBDA_FLAGS, the go build flags, split as the shell
	// splits them.
	LambdaFlags []string
}

// parseMakefile reads FUNCTIONS, LAMBDA_ENV and LAMBDA_FLAGS from the
// Makefile at path. They must be plain `:=` or `=` assignments.
func parseMakefile(path string) (*makefile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read Makefile: %w", err)
	}
	vars := map[string]string{}
	var logical strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasSuffix(line, `\`) {
			logical.WriteString(strings.TrimSuffix(line, `\`) + " ")
			continue
		}
		logical.WriteString(line)
		full := logical.String()
		logical.Reset()
		if strings.HasPrefix(full, "\t") || strings.HasPrefix(strings.TrimSpace(full), "#") {
			continue
		}
		eq := strings.Index(full, "=")
		if eq < 0 {
			continue
		}
		name := strings.TrimRight(full[:eq], ":?+")
		if name = strings.TrimSpace(name); name != "" && !strings.ContainsAny(name, " \t:$") {
			vars[name] = strings.TrimSpace(full[eq+1:])
		}
	}
	mk := &makefile{}
	for _, name := range []string{"FUNCTIONS", "LAMBDA_ENV", "LAMBDA_FLAGS"} {
		v, ok := vars[name]
		if !ok || v == "" {
			return nil, fmt.Errorf("Makefile: no %s assignment", name)
		}
		if strings.Contains(v, "$") {
			return nil, fmt.Errorf("Makefile: %s = %q refers to other variables, which these tests do not expand", name, v)
		}
	}
	for _, entry := range strings.Fields(vars["FUNCTIONS"]) {
		id, dir, ok := strings.Cut(entry, ":")
		if !ok || id == "" || dir == "" {
			return nil, fmt.Errorf("Makefile: FUNCTIONS entry %q, want LogicalId:directory", entry)
		}
		mk.Functions = append(mk.Functions, function{ID: id, Dir: dir})
	}
	if mk.LambdaEnv, err = shellWords(vars["LAMBDA_ENV"]); err != nil {
		return nil, fmt.Errorf("Makefile: LAMBDA_ENV: %w", err)
	}
	if mk.LambdaFlags, err = shellWords(vars["LAMBDA_FLAGS"]); err != nil {
		return nil, fmt.Errorf("Makefile: LAMBDA_FLAGS: %w", err)
	}
	return mk, nil
}

// shellWords splits s as sh does, for the quoting a Makefile variable
// uses: blanks, single and double quotes, backslash escapes.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, c := range s {
		switch {
		case escaped:
			w.WriteRune(c)
			escaped = false
		case c == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(c)
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(c)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// envFor is LAMBDA_ENV with its target replaced by goos/goarch.
func (mk *makefile) envFor(goos, goarch string) []string {
	env := []string{"GOOS=" + goos, "GOARCH=" + goarch}
	for _, kv := range mk.LambdaEnv {
		if !strings.HasPrefix(kv, "GOOS=") && !strings.HasPrefix(kv, "GOARCH=") {
			env = append(env, kv)
		}
	}
	return env
}

// targets reports whether LAMBDA_ENV already builds for goos/goarch.
func (mk *makefile) targets(goos, goarch string) bool {
	var gotOS, gotArch bool
	for _, kv := range mk.LambdaEnv {
		gotOS = gotOS || kv == "GOOS="+goos
		gotArch = gotArch || kv == "GOARCH="+goarch
	}
	return gotOS && gotArch
}

// build is one binary's build.
type build struct {
	Path   string
	Size   int64
	Took   time.Duration
	Err    error
	Output string
}

// buildSet is a set of builds under way.
type buildSet struct {
	done   chan struct{}
	builds map[string]*build // by function logical id, and baselineIDs
}

// wait waits for every build.
func (s *buildSet) wait() { <-s.done }

// binary waits for id's build and returns its path, failing tb when it
// did not build.
func (s *buildSet) binary(tb testing.TB, id string) (string, *build) {
	tb.Helper()
	s.wait()
	b, ok := s.builds[id]
	if !ok {
		tb.Fatalf("no build of %s", id)
	}
	if b.Err != nil {
		tb.Fatalf("build %s: %v\n%s", id, b.Err, b.Output)
	}
	return b.Path, b
}

// buildAll builds every function of mk for goos/goarch under dir, each as
// dir/<LogicalId>/bootstrap, through its build-<LogicalId> target with
// LAMBDA_ENV retargeted when goos/goarch are not the Makefile's; with
// minimal, testdata/minimal too, with the Makefile's flags. At most
// GOMAXPROCS builds run at once, sharing the Go build cache.
func buildAll(mk *makefile, goos, goarch, dir string, minimal bool) *buildSet {
	s := &buildSet{done: make(chan struct{}), builds: map[string]*build{}}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = "go"
	}
	type job struct {
		id  string
		cmd func(out string) *exec.Cmd
	}
	var jobs []job
	for _, fn := range mk.Functions {
		jobs = append(jobs, job{fn.ID, func(out string) *exec.Cmd {
			args := []string{"--no-print-directory", "build-" + fn.ID, "ARTIFACTS_DIR=" + out, "GO=" + goTool}
			if !mk.targets(goos, goarch) {
				args = append(args, "LAMBDA_ENV="+strings.Join(mk.envFor(goos, goarch), " "))
			}
			return exec.Command("make", args...)
		}})
	}
	if minimal {
		for _, id := range baselineIDs {
			jobs = append(jobs, job{id, func(out string) *exec.Cmd {
				args := append([]string{"build"}, mk.LambdaFlags...)
				args = append(args, "-o", filepath.Join(out, "bootstrap"), "./e2e/testdata/"+id)
				cmd := exec.Command(goTool, args...)
				cmd.Env = append(os.Environ(), mk.envFor(goos, goarch)...)
				return cmd
			}})
		}
	}
	for _, j := range jobs {
		s.builds[j.id] = &build{}
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			b := s.builds[j.id]
			out := filepath.Join(dir, j.id)
			cmd := j.cmd(out)
			cmd.Dir = root
			if cmd.Env == nil {
				cmd.Env = os.Environ()
			}
			// A make running these tests must not lend its jobserver.
			cmd.Env = append(cmd.Env, "MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=")
			start := time.Now()
			output, err := cmd.CombinedOutput()
			b.Took, b.Output = time.Since(start), string(output)
			if err != nil {
				b.Err = fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
				return
			}
			b.Path = filepath.Join(out, "bootstrap")
			fi, err := os.Stat(b.Path)
			if err != nil {
				b.Err = fmt.Errorf("%s built no bootstrap: %w", strings.Join(cmd.Args, " "), err)
				return
			}
			b.Size = fi.Size()
		}()
	}
	go func() {
		wg.Wait()
		close(s.done)
	}()
	return s
}

// TestEveryTemplateFunctionBuilds builds, through `make build-<LogicalId>`
// as SAM runs it, every AWS::Serverless::Function of template.yaml (TestMain
// built them), and checks that the Makefile's FUNCTIONS lists nothing else.
func TestEveryTemplateFunctionBuilds(t *testing.T) {
	tmpl := parseTemplate(t)
	listed := map[string]bool{}
	for _, fn := range mk.Functions {
		listed[fn.ID] = true
	}
	n := 0
	for id, r := range tmpl.Resources {
		if r.Type != "AWS::Serverless::Function" {
			continue
		}
		n++
		if !listed[id] {
			t.Errorf("%s: not in the Makefile's FUNCTIONS, so `make build` and SAM cannot build it", id)
			continue
		}
		delete(listed, id)
		if _, b := host.binary(t, id); b.Size == 0 {
			t.Errorf("%s: make build-%s built an empty bootstrap", id, id)
		}
	}
	if n == 0 {
		t.Fatal("template.yaml declares no AWS::Serverless::Function")
	}
	for id := range listed {
		t.Errorf("FUNCTIONS lists %s, which template.yaml does not declare", id)
	}
}
