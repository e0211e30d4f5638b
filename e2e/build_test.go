package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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
	dir, err := buildDir(runtime.GOOS, runtime.GOARCH)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	// The builds run while moto_server starts; tests wait for the binary
	// they need.
	host = buildAll(mk, runtime.GOOS, runtime.GOARCH, dir, true)
	defer host.wait()
	return stacktest.Main(m)
}

// buildDir is where this checkout's e2e builds for goos/goarch are kept
// from run to run, under the user's cache directory (as Go's build cache
// is): go build then relinks only the binaries whose inputs changed, where
// a new directory each run relinked all 49 functions twice (host and
// arm64), about 50 s of CPU. Each checkout has its own, named after a
// hash of its path.
func buildDir(goos, goarch string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("build directory: %w", err)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("build directory: %w", err)
	}
	sum := sha256.Sum256([]byte(abs))
	dir := filepath.Join(cache, "chatbridge-e2e", hex.EncodeToString(sum[:8]), goos+"-"+goarch)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build directory: %w", err)
	}
	return dir, nil
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

// buildAll builds every function of mk for goos/goarch under dir (each
// named after its directory), with the Makefile's LAMBDA_FLAGS and its
// LAMBDA_ENV retargeted to goos/goarch; with minimal, the baselines under
// testdata/ too. The functions are one `go build` of every FUNCTIONS
// directory: with a warm cache it costs what one function's
// `make build-<LogicalId>` does, where 49 of those cost 49 go commands
// loading the package graph. TestEveryTemplateFunctionBuilds holds the
// Makefile's own target to the same command and the same bytes. dir is
// best kept from run to run (buildDir): go build relinks only a binary
// that is out of date, which in a new directory each is.
func buildAll(mk *makefile, goos, goarch, dir string, minimal bool) *buildSet {
	s := &buildSet{done: make(chan struct{}), builds: map[string]*build{}}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = "go"
	}
	goBuild := func(out string, pkgs ...string) *exec.Cmd {
		args := append([]string{"build"}, mk.LambdaFlags...)
		args = append(args, "-o", out)
		cmd := exec.Command(goTool, append(args, pkgs...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), mk.envFor(goos, goarch)...)
		return cmd
	}
	// run runs cmd, then fills the build of each id from where cmd left
	// its binary (at of id) moved to dir/<id>/bootstrap.
	run := func(cmd *exec.Cmd, ids []string, at func(id string) string) {
		start := time.Now()
		output, err := cmd.CombinedOutput()
		for _, id := range ids {
			b := s.builds[id]
			b.Took, b.Output = time.Since(start), string(output)
			if err != nil {
				b.Err = fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
				continue
			}
			b.Path = at(id)
			fi, err := os.Stat(b.Path)
			if err != nil {
				b.Err = fmt.Errorf("%s built no binary for %s: %w", strings.Join(cmd.Args, " "), id, err)
				continue
			}
			b.Size = fi.Size()
		}
	}
	var ids, pkgs []string
	dirOf := map[string]string{}
	for _, fn := range mk.Functions {
		s.builds[fn.ID] = &build{}
		ids = append(ids, fn.ID)
		pkgs = append(pkgs, "./functions/"+fn.Dir)
		dirOf[fn.ID] = fn.Dir
	}
	all := filepath.Join(dir, "_functions")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// go build -o DIR/ names each binary after its package's directory.
		run(goBuild(all+string(filepath.Separator), pkgs...), ids, func(id string) string { return filepath.Join(all, dirOf[id]) })
	}()
	if minimal {
		for _, id := range baselineIDs {
			s.builds[id] = &build{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				out := filepath.Join(dir, "_"+id)
				run(goBuild(out, "./e2e/testdata/"+id), []string{id}, func(string) string { return out })
			}()
		}
	}
	go func() {
		wg.Wait()
		close(s.done)
	}()
	return s
}

// TestEveryTemplateFunctionBuilds: every AWS::Serverless::Function of
// template.yaml is in the Makefile's FUNCTIONS and nothing else is; each
// built (TestMain built them with the Makefile's flags); the Makefile's
// build-<LogicalId>, which SAM runs, is for each exactly that go build of
// its directory into ARTIFACTS_DIR/bootstrap (make -n); and run for real
// for one function, it makes the same bytes as TestMain's build.
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
			t.Errorf("%s: built an empty bootstrap", id)
		}
	}
	if n == 0 {
		t.Fatal("template.yaml declares no AWS::Serverless::Function")
	}
	for id := range listed {
		t.Errorf("FUNCTIONS lists %s, which template.yaml does not declare", id)
	}
	for _, fn := range mk.Functions {
		dry := exec.Command("make", "-n", "--no-print-directory", "-C", root, "build-"+fn.ID, "ARTIFACTS_DIR=ART")
		// A make running these tests must not lend its jobserver or flags.
		dry.Env = append(os.Environ(), "MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=")
		out, err := dry.Output()
		want := strings.Join(append(append(append([]string{}, mk.LambdaEnv...), "go", "build"), mk.LambdaFlags...), " ")
		got := strings.TrimSpace(string(out))
		// make -n prints the recipe as the shell gets it: LAMBDA_FLAGS keeps
		// its quotes there.
		got = strings.ReplaceAll(got, `"`, "")
		if err != nil || got != want+" -o ART/bootstrap ./functions/"+fn.Dir {
			t.Errorf("make build-%s runs %q (%v), want %q", fn.ID, got, err, want+" -o ART/bootstrap ./functions/"+fn.Dir)
		}
	}
	fn := mk.Functions[0]
	art := t.TempDir()
	args := []string{"--no-print-directory", "-C", root, "build-" + fn.ID, "ARTIFACTS_DIR=" + art}
	if !mk.targets(runtime.GOOS, runtime.GOARCH) {
		args = append(args, "LAMBDA_ENV="+strings.Join(mk.envFor(runtime.GOOS, runtime.GOARCH), " "))
	}
	cmd := exec.Command("make", args...)
	// A make running these tests must not lend its jobserver.
	cmd.Env = append(os.Environ(), "MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build-%s: %v\n%s", fn.ID, err, out)
	}
	made, err := os.ReadFile(filepath.Join(art, "bootstrap"))
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := host.binary(t, fn.ID)
	built, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(made, built) {
		t.Errorf("make build-%s made %d bytes that differ from the tests' build of %d bytes", fn.ID, len(made), len(built))
	}
}
