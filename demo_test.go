package chatbundle_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/childproc"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
)

// demoEvent is a line of the demo's receiver: which webhook got which
// event, with its delivery and attempt, then the event's JSON.
var demoEvent = regexp.MustCompile(`^the (outbound|support) webhook "([^"]+)" got ([a-z_.]+) \(delivery ([0-9A-Z]{26}), attempt ([0-9]+)\): (\{.*\})$`)

// TestDemoStepsPastedAtOnce runs what `make run` runs (chatctl serve
// --demo, on free ports) and the walk-through it prints, pasted into one
// shell at once as a reader would, and checks what the reader then sees:
// step 11 redelivers step 9's room.closed (not whichever delivery was the
// newest when it ran) and the receiver prints it again as attempt 2; every
// event the receiver prints names its webhook, delivery and attempt; the
// fixture's rooms that are closed or expired announce no room.created; and
// the console shows no request log, which goes to .run/serve.log.
func TestDemoStepsPastedAtOnce(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "sed", "grep", "cut", "seq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: the demo's steps need %s, which is not installed", tool)
		}
	}
	var stdout, stderr childproc.Output
	srv := startDemoServe(t, "demo", &stdout, &stderr)
	dir, env := srv.Dir, srv.Env

	printed := stdout.String()
	start := strings.Index(printed, "\n# 1.")
	last := strings.Index(printed, "\n# 11.")
	if start < 0 || last < 0 {
		t.Fatalf("chatctl serve --demo printed no steps 1 to 11:\n%s", printed)
	}
	end := strings.Index(printed[last:], "\n\n")
	if end < 0 {
		t.Fatalf("step 11 does not end:\n%s", printed[last:])
	}
	script := printed[start:last+end] + "\necho \"ROOM=$ROOM DELIVERY=$DELIVERY\"\n"
	sh := exec.Command("bash", "-c", script)
	sh.Dir, sh.Env = dir, env
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the demo's steps: %v\n%s", err, out)
	}
	var room, delivery string
	if m := regexp.MustCompile(`ROOM=(\S*) DELIVERY=(\S*)`).FindStringSubmatch(string(out)); m != nil {
		room, delivery = m[1], m[2]
	}
	if !chat.ValidID(room) || !chat.ValidID(delivery) {
		t.Fatalf("the steps kept ROOM=%q DELIVERY=%q, want two ids:\n%s", room, delivery, out)
	}

	// Step 11's redelivery is step 9's room.closed, printed again.
	var redelivered string
	for deadline := time.Now().Add(30 * time.Second); redelivered == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		for _, line := range strings.Split(stdout.String(), "\n") {
			if m := demoEvent.FindStringSubmatch(line); m != nil && m[4] == delivery && m[5] == "2" {
				redelivered = line
			}
		}
	}
	if m := demoEvent.FindStringSubmatch(redelivered); m == nil || m[1] != "support" || m[3] != "room.closed" || !strings.Contains(m[6], `"room_id":"`+room+`"`) {
		t.Errorf("step 11 redelivered %s: got %q, want attempt 2 of the support webhook's room.closed of step 9's room %s\nreceiver:\n%s",
			delivery, redelivered, room, stdout.String())
	}

	d, err := fixture.Parse(chatbundle.DemoFixture)
	if err != nil {
		t.Fatal(err)
	}
	var never []string
	for _, r := range d.Workspaces[0].TemporaryRooms {
		if r.Status != chat.RoomActive || !r.Expires().After(time.Now()) {
			never = append(never, r.RoomID)
		}
	}
	if len(never) == 0 {
		t.Fatal("the demo fixture has no closed or expired room; this test no longer proves they announce nothing")
	}
	events := 0
	names := map[string]map[string]bool{} // event type -> webhooks that printed it
	for _, line := range strings.Split(stdout.String(), "\n") {
		if !strings.Contains(line, `{"id":`) { // an event's JSON; no step's
			continue
		}
		events++
		m := demoEvent.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("the receiver printed %q, want it to name the webhook, the delivery and the attempt", line)
			continue
		}
		if names[m[3]] == nil {
			names[m[3]] = map[string]bool{}
		}
		names[m[3]][m[2]] = true
		for _, id := range never {
			if m[3] == "room.created" && strings.Contains(m[6], `"room_id":"`+id+`"`) {
				t.Errorf("the fixture's room %s, closed or expired, was announced: %s", id, line)
			}
		}
	}
	if events < 10 {
		t.Errorf("the receiver printed %d events, want those of every step:\n%s", events, stdout.String())
	}
	if len(names["message.created"]) < 2 {
		t.Errorf("message.created printed for %v, want both outbound webhooks that subscribe to it, each by name", names["message.created"])
	}

	// The console keeps the steps and the events; requests are logged to the file.
	if strings.Contains(stderr.String(), `"msg":"request"`) || strings.Contains(stdout.String(), `"msg":"request"`) {
		t.Errorf("the console shows request logs:\n%s", stderr.String())
	}
	logged, err := os.ReadFile(filepath.Join(dir, ".run", "serve.log"))
	if err != nil || !strings.Contains(string(logged), `"msg":"request"`) {
		t.Errorf("the service's log %s: %v, want the request log lines there", filepath.Join(dir, ".run", "serve.log"), err)
	}
	if !strings.Contains(stderr.String(), ".run/serve.log") {
		t.Errorf("the console does not say where the log goes:\n%s", stderr.String())
	}
	if t.Failed() {
		t.Logf("the steps' output:\n%s\nchatctl serve's stderr:\n%s", out, stderr.String())
	}
}
