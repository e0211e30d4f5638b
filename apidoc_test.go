package chatbundle_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/childproc"
	"github.com/chatbridge/chat/pkg/awsenv"
)

// docExample is one shell example of docs/api.md, with the statuses (and
// error codes) its text says its requests answer, in order.
type docExample struct {
	line   int // of its opening fence
	script string
	want   []docAnswer
}

// docAnswer is what one request of an example answers: a status, and the
// error code when the text names one.
type docAnswer struct {
	status string
	code   string
}

func (a docAnswer) String() string { return strings.TrimSpace(a.status + " " + a.code) }

// expectation is the comment after a request: "# → 201", or
// "# → 410 temporary_room_expired: ...".
var expectation = regexp.MustCompile(`^# → (\d{3})(?: ([a-z][a-z_]*[a-z]))?\b`)

// shellExamples returns the ```sh blocks of a markdown document in order.
func shellExamples(doc string) []docExample {
	var out []docExample
	var cur *docExample
	for i, line := range strings.Split(doc, "\n") {
		switch {
		case cur == nil && strings.TrimSpace(line) == "```sh":
			cur = &docExample{line: i + 1}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.script += line + "\n"
			if m := expectation.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
				cur.want = append(cur.want, docAnswer{m[1], m[2]})
			}
		}
	}
	return out
}

// docHarness runs before the examples: curl records, for each request, its
// status and the body's error code in $DOC_LOG, and is otherwise the real
// curl (the examples' own pipes and options are untouched). set -u catches
// an example that uses a variable no earlier example set.
const docHarness = `set -euo pipefail
curl() {
  local head body rc
  head=$(mktemp) body=$(mktemp)
  rc=0; command curl -D "$head" "$@" >"$body" || rc=$?
  cat "$body"
  printf 'request %s %s\n' "$(sed -n 's/^HTTP\/[0-9.]* \([0-9]*\).*/\1/p' "$head" | tail -n 1)" \
    "$(sed -n 's/.*"code":\["\([a-z_]*\)".*/\1/p' "$body" | head -n 1)" >>"$DOC_LOG"
  rm -f "$head" "$body"
  return "$rc"
}
`

// TestAPIDocExamples runs every shell example of docs/api.md, in order, in
// one bash shell, against chatctl serve --demo on free ports (the child
// process is stopped by its PID), and checks each request's status and
// error code against the "# → ..." comment that the text gives it.
func TestAPIDocExamples(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "openssl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: docs/api.md's examples need %s, which is not installed", tool)
		}
	}
	doc, err := os.ReadFile("docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := shellExamples(string(doc))
	if len(examples) < 20 {
		t.Fatalf("got %d shell examples in docs/api.md, want every section's", len(examples))
	}

	var served childproc.Output
	srv := startDemoServe(t, "apidoc", &served, &served)
	dir, base, env := srv.Dir, srv.Base, srv.Env
	endpoint := os.Getenv(awsenv.EnvEndpoint)

	// The examples as written, but for the two local addresses, which the
	// test picks free.
	var script strings.Builder
	script.WriteString(docHarness)
	for i, ex := range examples {
		fmt.Fprintf(&script, "printf 'example %d\\n' >>\"$DOC_LOG\"\n", i)
		body := strings.ReplaceAll(ex.script, "http://127.0.0.1:3000", base)
		script.WriteString(strings.ReplaceAll(body, "http://127.0.0.1:4566", endpoint))
	}
	logPath := filepath.Join(dir, "requests.log")
	sh := exec.Command("bash", "-c", script.String())
	sh.Dir, sh.Env = dir, append(env, "DOC_LOG="+logPath)
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Errorf("the examples stopped: %v\nshell output:\n%s\nchatctl serve:\n%s", err, out, served.String())
	}
	log, _ := os.ReadFile(logPath)
	got := make([][]docAnswer, len(examples))
	ran := -1
	for _, line := range strings.Split(string(log), "\n") {
		var n int
		var status, code string
		if _, err := fmt.Sscanf(line, "example %d", &n); err == nil {
			ran = n
			continue
		}
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "request" && ran >= 0 {
			status = f[1]
			if len(f) > 2 {
				code = f[2]
			}
			got[ran] = append(got[ran], docAnswer{status, code})
		}
	}
	for i, ex := range examples {
		if i > ran {
			t.Errorf("docs/api.md:%d: the example did not run", ex.line)
			continue
		}
		if len(got[i]) != len(ex.want) {
			t.Errorf("docs/api.md:%d: got %d requests %v, want %d as its comments say %v", ex.line, len(got[i]), got[i], len(ex.want), ex.want)
			continue
		}
		for j, w := range ex.want {
			g := got[i][j]
			if g.status != w.status || w.code != "" && g.code != w.code {
				t.Errorf("docs/api.md:%d: request %d: got %s, want %s", ex.line, j+1, g, w)
			}
		}
	}
	// The demo's receiver got every kind of event the examples cause,
	// the support webhook's included, and refused none.
	for _, typ := range []string{"message.created", "room.created", "room.guest_joined", "room.message_created", "room.closed"} {
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(served.String(), `"type":"`+typ+`"`) && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
		}
		if !strings.Contains(served.String(), `"type":"`+typ+`"`) {
			t.Errorf("the demo receiver printed no %s event", typ)
		}
	}
	if strings.Contains(served.String(), "refused") {
		t.Errorf("the demo receiver refused deliveries:\n%s", served.String())
	}
	checked := 0
	for _, ex := range examples {
		checked += len(ex.want)
	}
	t.Logf("%d examples run, %d requests checked against their comments", len(examples), checked)
	if t.Failed() {
		t.Logf("shell output:\n%s", out)
	}
}

// waitServing waits until chatctl serve has printed the demo's steps and
// answers on base.
func waitServing(t *testing.T, base string, served *childproc.Output, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatalf("chatctl serve exited:\n%s", served.String())
		default:
		}
		if strings.Contains(served.String(), "The demo workspace") {
			if resp, err := http.Get(base + "/openapi.yaml"); err == nil {
				resp.Body.Close()
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("chatctl serve did not serve within 90 s:\n%s", served.String())
}
