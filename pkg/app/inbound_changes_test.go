package app_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
)

// TestInboundChangesApplyAtOnce: with the settings cached (WEBHOOK_CACHE_TTL
// one minute, the clock standing still), every change answers for the next
// post (contract section 10, "Changes take effect at once"): a rotated
// secret is accepted at once, the secret it replaced stays valid, an older
// one is refused at once, a changed bot name and scheme apply, a disabled,
// re-enabled or deleted webhook answers accordingly. Each is never a 500.
// Before the accept transaction checked the webhook's version and a refusal
// re-read the settings, the cache answered with the settings it held.
func TestInboundChangesApplyAtOnce(t *testing.T) {
	w := newAdminWorld(t)
	id, first := w.createInbound(t, "Before")
	if got := w.post(t, id, first); got != 202 {
		t.Fatalf("post with the created secret: got %d, want 202", got)
	}
	// The webhook's settings are now cached, and the clock never moves.
	rotate := func() string { return w.rotateInbound(t, id) }
	second := rotate()
	if got := w.post(t, id, second); got != 202 {
		t.Fatalf("new secret right after the rotation: got %d, want 202", got)
	}
	if got := w.post(t, id, first); got != 202 {
		t.Fatalf("replaced secret within its window: got %d, want 202", got)
	}
	// Accepted by the cached copy once more, refused by the stored one.
	if got := w.post(t, id, first); got != 202 {
		t.Fatalf("replaced secret again: got %d, want 202", got)
	}
	third := rotate()
	if rec := w.do(t, "POST", w.postPath(id), `{"content":"x"}`, map[string]string{"X-Service-Webhook-Secret": first}); rec.Code != 401 || codeOf(t, rec) != chat.EInvalidSecret {
		t.Fatalf("secret replaced two rotations ago: got %d %s, want 401 invalid_secret", rec.Code, rec.Body)
	}
	for _, s := range []string{third, second} {
		if got := w.post(t, id, s); got != 202 {
			t.Fatalf("current or previous secret after the second rotation: got %d, want 202", got)
		}
	}

	// A changed bot name is the next message's author.
	if status, _, raw := w.call(t, "PATCH", w.api("/inbound-webhooks/"+id), `{"bot_name":"After"}`, w.admin, 2); status != 200 {
		t.Fatalf("patch bot_name: got %d %s, want 200", status, raw)
	}
	rec := w.do(t, "POST", w.postPath(id), `{"content":"renamed"}`, map[string]string{"X-Service-Webhook-Secret": third})
	var body struct {
		Data struct {
			Author struct{ Name string } `json:"author"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); rec.Code != 202 || err != nil || body.Data.Author.Name != "After" {
		t.Fatalf("post after the rename: got %d %s, want 202 by After", rec.Code, rec.Body)
	}

	// The scheme: a static secret no longer opens a signature webhook.
	if status, _, raw := w.call(t, "PATCH", w.api("/inbound-webhooks/"+id), `{"signature_required":true}`, w.admin, 2); status != 200 {
		t.Fatalf("patch signature_required: got %d %s, want 200", status, raw)
	}
	if got := w.post(t, id, third); got != 401 {
		t.Fatalf("static secret after signature_required: got %d, want 401", got)
	}
	if status, _, raw := w.call(t, "PATCH", w.api("/inbound-webhooks/"+id), `{"signature_required":false}`, w.admin, 2); status != 200 {
		t.Fatalf("patch signature_required back: got %d %s, want 200", status, raw)
	}
	if got := w.post(t, id, third); got != 202 {
		t.Fatalf("static secret after signature_required false: got %d, want 202", got)
	}

	// Disabled, enabled, deleted.
	for _, c := range []struct {
		method, body string
		want         int
	}{
		{"PATCH", `{"enabled":false}`, 404},
		{"PATCH", `{"enabled":true}`, 202},
		{"DELETE", "", 404},
	} {
		want := 200
		if c.method == "DELETE" {
			want = 204
		}
		if status, _, raw := w.call(t, c.method, w.api("/inbound-webhooks/"+id), c.body, w.admin, 2); status != want {
			t.Fatalf("%s %s: got %d %s, want %d", c.method, c.body, status, raw, want)
		}
		if got := w.post(t, id, third); got != c.want {
			t.Fatalf("post after %s %s: got %d, want %d", c.method, c.body, got, c.want)
		}
	}
}

// TestInboundEditsApplyAtOnce: a webhook's edits and deletions of its own
// messages follow every change of the webhook at once, as its posts do,
// though its settings are cached and the clock stands still: a secret
// replaced two rotations ago, a disabled or a deleted webhook changes
// nothing, and the message keeps the content of the last accepted edit.
func TestInboundEditsApplyAtOnce(t *testing.T) {
	w := newAdminWorld(t)
	id, first := w.createInbound(t, "Editor")
	rec := w.do(t, "POST", w.postPath(id), `{"content":"draft"}`, map[string]string{"X-Service-Webhook-Secret": first})
	var posted struct {
		Data struct{ ID string } `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &posted); rec.Code != 202 || err != nil {
		t.Fatalf("post: got %d %s, want 202", rec.Code, rec.Body)
	}
	path := "/webhooks/" + id + "/messages/" + posted.Data.ID
	edit := func(secret, content string) int {
		t.Helper()
		return w.do(t, "PATCH", path, `{"content":"`+content+`"}`, map[string]string{"X-Service-Webhook-Secret": secret}).Code
	}
	if got := edit(first, "first edit"); got != 200 {
		t.Fatalf("edit with the created secret: got %d, want 200", got)
	}
	// The settings are cached now. Two rotations put the first secret out.
	rotate := func() string { return w.rotateInbound(t, id) }
	second := rotate()
	if got := edit(first, "within the window"); got != 200 {
		t.Fatalf("edit with the replaced secret within its window: got %d, want 200", got)
	}
	third := rotate()
	if got := edit(first, "too late"); got != 401 {
		t.Fatalf("edit with a secret replaced two rotations ago: got %d, want 401", got)
	}
	for i, s := range []string{third, second} {
		if got := edit(s, "current "+string(rune('a'+i))); got != 200 {
			t.Fatalf("edit with the current or previous secret: got %d, want 200", got)
		}
	}
	if status, _, raw := w.call(t, "PATCH", w.api("/inbound-webhooks/"+id), `{"enabled":false}`, w.admin, 2); status != 200 {
		t.Fatalf("disable: got %d %s, want 200", status, raw)
	}
	if got := edit(third, "while disabled"); got != 404 {
		t.Fatalf("edit by a disabled webhook: got %d, want 404", got)
	}
	if status, _, raw := w.call(t, "DELETE", w.api("/inbound-webhooks/"+id), "", w.admin, 2); status != 204 {
		t.Fatalf("delete webhook: got %d %s, want 204", status, raw)
	}
	if got := w.do(t, "DELETE", path, "", map[string]string{"X-Service-Webhook-Secret": third}).Code; got != 404 {
		t.Fatalf("deletion by a deleted webhook: got %d, want 404", got)
	}
	item := storetestMessage(t, w, posted.Data.ID)
	if item.Content != "current b" || item.Rev() != 5 || item.Deleted() {
		t.Fatalf("got message %q at revision %d (deleted %v), want the last accepted edit, revision 5 (four edits accepted), not deleted", item.Content, item.Rev(), item.Deleted())
	}
}

// storetestMessage reads message id of w's general channel as stored.
func storetestMessage(t *testing.T, w *adminWorld, id string) chat.Message {
	t.Helper()
	out, err := w.st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(w.st.Table),
		Key: dynamo.Key(dynamo.ChanPK(w.general), dynamo.MessageSK(id)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := dynamo.MessageFromImage(out.Item)
	if !ok {
		t.Fatalf("message %s: got item %v, want a message", id, out.Item)
	}
	return m
}

// createInbound creates an inbound webhook posting as bot in general and
// returns its id and secret.
func (w *adminWorld) createInbound(t *testing.T, bot string) (id, secret string) {
	t.Helper()
	status, created, raw := w.call(t, "POST", w.api("/inbound-webhooks"), `{"channel_id":"`+w.general+`","bot_name":"`+bot+`"}`, w.admin, 2)
	if status != 201 {
		t.Fatalf("create: got %d %s, want 201", status, raw)
	}
	return data(created)["id"].(string), data(created)["secret"].(string)
}

// rotateInbound rotates inbound webhook id's secret and returns the new one.
func (w *adminWorld) rotateInbound(t *testing.T, id string) string {
	t.Helper()
	status, rotated, raw := w.call(t, "POST", w.api("/inbound-webhooks/"+id+"/rotate-secret"), "", w.admin, 2)
	if status != 200 {
		t.Fatalf("rotate: got %d %s, want 200", status, raw)
	}
	return data(rotated)["secret"].(string)
}
