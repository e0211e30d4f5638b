package chatbundle_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/delivery/attempt"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/netguard"
)

// docSnippet returns the first ```lang block of the section of doc that
// starts with heading, up to the next heading of its level or above.
func docSnippet(t *testing.T, doc, heading, lang string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("docs/api.md has no %q", heading)
	}
	section := doc[i+1:]
	level := strings.Fields(heading)[0]
	if j := strings.Index(section[len(heading):], "\n"+level+" "); j >= 0 {
		section = section[:len(heading)+j]
	}
	if j := strings.Index(section[len(heading):], "\n## "); j >= 0 {
		section = section[:len(heading)+j]
	}
	open := "\n```" + lang + "\n"
	start := strings.Index(section, open)
	if start < 0 {
		t.Fatalf("docs/api.md: %q has no ```%s block", heading, lang)
	}
	code := section[start+len(open):]
	end := strings.Index(code, "\n```\n")
	if end < 0 {
		t.Fatalf("docs/api.md: %q: its ```%s block does not end", heading, lang)
	}
	return code[:end+1]
}

// verifyCase is one delivery a snippet judges: headers with lower-case
// names, the raw body, the secrets it holds and its clock.
type verifyCase struct {
	Name    string            `json:"name"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"` // base64
	Secrets []string          `json:"secrets"`
	Now     float64           `json:"now"`
	want    bool
}

// The harnesses read the cases as JSON on stdin and print one verdict per
// case, after the snippet itself.
const (
	pythonHarness = `
import json, sys
for c in json.load(sys.stdin):
    ok = verify(c["headers"], base64.b64decode(c["body"]), [s.encode() for s in c["secrets"]], now=c["now"])
    print("accept" if ok is True else "reject")
`
	nodeHarness = `
let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  for (const c of JSON.parse(input)) {
    const ok = verify(c.headers, Buffer.from(c.body, "base64"), c.secrets.map((s) => Buffer.from(s)), c.now);
    console.log(ok === true ? "accept" : "reject");
  }
});
`
)

// receivedDelivery is what the local receiver got: the request's headers
// (one value each) and raw body.
type receivedDelivery struct {
	header http.Header
	body   []byte
}

// realDeliveries has the delivery function's own code (attempt.Deliverer,
// its signing and its network guard) POST events to a receiver on
// 127.0.0.1, for a webhook with one signing secret and for one in a
// rotation (two), and returns what the receiver got.
func realDeliveries(t *testing.T, current, previous string) []receivedDelivery {
	t.Helper()
	var mu sync.Mutex
	var got []receivedDelivery
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, receivedDelivery{r.Header.Clone(), body})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	allow, err := netguard.ParseCIDRs("127.0.0.1/32")
	if err != nil {
		t.Fatal(err)
	}
	client := (&netguard.Guard{Allow: allow, AllowOnly: true}).Client()
	now := time.Now()
	evs := []events.Event{
		{ID: "01JDA5Q4V3K7Z2M8N6P0R1S2T3", Type: events.RoomClosed, WorkspaceID: "01JD9N0V80G9T6DXN5EAY6K8H4", CreatedAt: now,
			Data: events.Room{Name: "Support <call> & \u2028 ñ 😀"}},
		{ID: "01JDA5Q4V3K7Z2M8N6P0R1S2T4", Type: events.WebhookTest, WorkspaceID: "01JD9N0V80G9T6DXN5EAY6K8H4", CreatedAt: now,
			Data: events.WebhookRef{WebhookID: "01JD9N15ZR836GD73VZ533YQJJ"}},
	}
	for i, secrets := range [][][]byte{{[]byte(current)}, {[]byte(current), []byte(previous)}} {
		hook := delivery.Webhook{ID: "01JD9N15ZR836GD73VZ533YQJJ", Kind: events.KindOutbound, URL: srv.URL + "/hook", Active: true, Secrets: secrets}
		d := &attempt.Deliverer{Store: &oneWebhook{hook}, Client: client, Schedule: attempt.DefaultSchedule}
		for j, ev := range evs {
			body, err := events.Encode(ev)
			if err != nil {
				t.Fatal(err)
			}
			res, err := d.Handle(context.Background(), delivery.Message{Delivery: events.Delivery{
				ID: fmt.Sprintf("01JDA5Q4V3B8000000000000%d%d", i, j), WebhookID: hook.ID, Kind: hook.Kind, EventType: ev.Type, Body: body}})
			if err != nil || res.Attempt.Status != delivery.StatusSucceeded {
				t.Fatalf("delivery of %s: %+v, %v; want it succeeded", ev.Type, res.Attempt, err)
			}
		}
	}
	if len(got) != 4 {
		t.Fatalf("the receiver got %d deliveries, want 4", len(got))
	}
	return got
}

// oneWebhook is a delivery.Store of one webhook that records nothing.
type oneWebhook struct{ w delivery.Webhook }

func (s *oneWebhook) Webhook(context.Context, string, string, string) (delivery.Webhook, error) {
	return s.w, nil
}
func (s *oneWebhook) Reserve(context.Context, delivery.Reservation) (int, bool, delivery.State, error) {
	return 1, true, delivery.State{}, nil
}
func (s *oneWebhook) RecordAttempt(context.Context, delivery.Attempt) error              { return nil }
func (s *oneWebhook) ExtendFailing(context.Context, delivery.Webhook, time.Time) error   { return nil }
func (s *oneWebhook) Disable(context.Context, delivery.Webhook, string, time.Time) error { return nil }
func (s *oneWebhook) ClearFailing(context.Context, delivery.Webhook) error               { return nil }
func (s *oneWebhook) Event(context.Context, string) ([]byte, error)                      { return nil, nil }

// TestVerifySnippetsAcceptRealDeliveries runs docs/api.md's Python and Node
// verifiers (python3 and node, with nothing but their standard libraries)
// on deliveries that the delivery function's code sent to a local
// receiver: each must accept every delivery by either scheme
// (X-Service-Signature, and the Standard Webhooks headers alone), with the
// current secret and, during a rotation, the previous one, up to 300
// seconds after its timestamp; and reject it with a byte of its body
// changed, with another secret, and 301 seconds after its timestamp.
func TestVerifySnippetsAcceptRealDeliveries(t *testing.T) {
	docBytes, err := os.ReadFile("docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(docBytes)
	const current, previous = "whsig_snippet_current_secret", "whsig_snippet_previous_secret"
	var cases []verifyCase
	for i, d := range realDeliveries(t, current, previous) {
		rotating := i >= 2
		full := map[string]string{}
		for k := range d.header {
			full[strings.ToLower(k)] = d.header.Get(k)
		}
		standard := map[string]string{}
		for k, v := range full {
			if k != "x-service-signature" {
				standard[k] = v
			}
		}
		if full["x-service-signature"] == "" || standard["webhook-signature"] == "" {
			t.Fatalf("delivery %d lacks a scheme's headers: %v", i, full)
		}
		ts, err := strconv.ParseFloat(full["webhook-timestamp"], 64)
		if err != nil {
			t.Fatalf("delivery %d: webhook-timestamp %q", i, full["webhook-timestamp"])
		}
		tampered := bytes.Replace(d.body, []byte(`"type":"`), []byte(`"type":"x`), 1)
		if bytes.Equal(tampered, d.body) {
			t.Fatalf("delivery %d: nothing to tamper with in %s", i, d.body)
		}
		for scheme, h := range map[string]map[string]string{"X-Service-Signature": full, "Standard Webhooks": standard} {
			add := func(name string, body []byte, secrets []string, now float64, want bool) {
				cases = append(cases, verifyCase{Name: fmt.Sprintf("delivery %d (%s, %s): %s", i, d.header.Get("X-Service-Event"), scheme, name),
					Headers: h, Body: base64.StdEncoding.EncodeToString(body), Secrets: secrets, Now: now, want: want})
			}
			add("as sent", d.body, []string{current}, ts, true)
			add("300 s later", d.body, []string{current}, ts+300, true)
			add("300 s earlier", d.body, []string{current}, ts-300, true)
			add("a byte of the body changed", tampered, []string{current}, ts, false)
			add("another secret", d.body, []string{"whsig_snippet_other_secret"}, ts, false)
			add("301 s later", d.body, []string{current}, ts+301, false)
			if rotating {
				add("the previous secret, during a rotation", d.body, []string{previous}, ts, true)
				add("another and the previous secret", d.body, []string{"whsig_snippet_other_secret", previous}, ts, true)
			}
		}
	}
	input, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range []struct {
		name, block, file, harness, tool, compare string
	}{
		{"Python", "python", "verify.py", pythonHarness, "python3", "hmac.compare_digest"},
		{"Node", "js", "verify.js", nodeHarness, "node", "crypto.timingSafeEqual"},
	} {
		t.Run(lang.name, func(t *testing.T) {
			if _, err := exec.LookPath(lang.tool); err != nil {
				t.Skipf("SKIPPED: docs/api.md's %s verifier needs %s, which is not installed", lang.name, lang.tool)
			}
			snippet := docSnippet(t, doc, "### Verifying a signature", lang.block)
			if !strings.Contains(snippet, lang.compare) {
				t.Errorf("the %s verifier does not compare with %s (constant time)", lang.name, lang.compare)
			}
			path := filepath.Join(t.TempDir(), lang.file)
			if err := os.WriteFile(path, []byte(snippet+lang.harness), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(lang.tool, path)
			cmd.Stdin = bytes.NewReader(input)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", lang.tool, lang.file, err, stderr.String())
			}
			verdicts := strings.Fields(string(out))
			if len(verdicts) != len(cases) {
				t.Fatalf("got %d verdicts for %d deliveries:\n%s\n%s", len(verdicts), len(cases), out, stderr.String())
			}
			for i, c := range cases {
				if got, want := verdicts[i] == "accept", c.want; got != want {
					t.Errorf("%s: got %s, want %v", c.Name, verdicts[i], map[bool]string{true: "accept", false: "reject"}[want])
				}
			}
		})
	}
}
