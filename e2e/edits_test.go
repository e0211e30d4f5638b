package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/lambdart"
	"github.com/chatbridge/chat/internal/wiringtest"
)

// TestEditsThroughTheirBinaries runs contract section 13 through the real
// bootstraps: Ben's post (PostChannelMessageFunction), his edit with
// If-Match (EditChannelMessageFunction: 200 at revision 2, then 412 for the
// stale revision), his deletion (DeleteChannelMessageFunction: 204), and
// an edit of the deleted message (410 message_deleted).
func TestEditsThroughTheirBinaries(t *testing.T) {
	start := demoRuntimes(t)
	sample := func(name string) events.APIGatewayV2HTTPRequest { return sampleHTTP(t, name) }
	ben := "Bearer wsk_demo_ben_token"
	post := sample("post-channel-message.json")
	post.Headers["authorization"] = ben
	resp := invokeHTTP(t, start("PostChannelMessageFunction"), mustJSON(t, post))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("post: %d %s", resp.StatusCode, resp.Body)
	}
	var posted struct{ Data struct{ ID string } }
	if err := json.Unmarshal([]byte(resp.Body), &posted); err != nil {
		t.Fatal(err)
	}
	at := func(ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPRequest {
		ev.Headers["authorization"] = ben
		old := ev.PathParameters["message_id"]
		ev.PathParameters["message_id"] = posted.Data.ID
		ev.RawPath = strings.Replace(ev.RawPath, old, posted.Data.ID, 1)
		ev.RequestContext.HTTP.Path = ev.RawPath
		return ev
	}
	edit := at(sample("edit-channel-message.json"))
	editor := start("EditChannelMessageFunction")
	if resp = invokeHTTP(t, editor, mustJSON(t, edit)); resp.StatusCode != http.StatusOK || !strings.Contains(resp.Body, `"revision":2`) {
		t.Fatalf("edit: %d %s, want 200 at revision 2", resp.StatusCode, resp.Body)
	}
	if resp = invokeHTTP(t, editor, mustJSON(t, edit)); resp.StatusCode != http.StatusPreconditionFailed || !strings.Contains(resp.Body, "revision_mismatch") {
		t.Fatalf("stale If-Match: %d %s, want 412 revision_mismatch", resp.StatusCode, resp.Body)
	}
	if resp = invokeHTTP(t, start("DeleteChannelMessageFunction"), mustJSON(t, at(sample("delete-channel-message.json")))); resp.StatusCode != http.StatusNoContent || resp.Body != "" {
		t.Fatalf("delete: %d %q, want 204 with no body", resp.StatusCode, resp.Body)
	}
	delete(edit.Headers, "if-match")
	if resp = invokeHTTP(t, editor, mustJSON(t, edit)); resp.StatusCode != http.StatusGone || !strings.Contains(resp.Body, "message_deleted") {
		t.Fatalf("edit after delete: %d %s, want 410 message_deleted", resp.StatusCode, resp.Body)
	}
}

// demoRuntimes starts functions' real bootstraps on the demo stack, one
// runtime per function, started on first use.
func demoRuntimes(t *testing.T) func(id string) *lambdart.Runtime {
	t.Helper()
	tmpl := parseTemplate(t)
	st, _ := wiringtest.Demo(t)
	runtimes := map[string]*lambdart.Runtime{}
	return func(id string) *lambdart.Runtime {
		t.Helper()
		if r, ok := runtimes[id]; ok {
			return r
		}
		bin, _ := host.binary(t, id)
		r := lambdart.Start(t, bin, demoEnv(t, tmpl, id, st))
		r.Timeout = functionTimeout(t, id)
		runtimes[id] = r
		return r
	}
}

// sampleHTTP is the sample event events/name.
func sampleHTTP(t *testing.T, name string) events.APIGatewayV2HTTPRequest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}
