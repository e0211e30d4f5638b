package app_test

import (
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// signedPost posts body through the world's signed webhook, signed at ts,
// and returns the message's id and its path for the webhook's changes.
func (w *world) signedPost(t *testing.T, body string, ts int64) (id, path string) {
	t.Helper()
	rec := w.do(t, "POST", w.postPath(w.signed.ID), body, w.signedHeaders(body, ts, nil))
	if rec.Code != 202 {
		t.Fatalf("post: %d %s", rec.Code, rec.Body)
	}
	var b struct{ Data struct{ ID string } }
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	return b.Data.ID, "/webhooks/" + w.signed.ID + "/messages/" + b.Data.ID
}

// acceptedID posts content through the world's static webhook and returns
// the message id.
func (w *world) acceptedID(t *testing.T, body string) string {
	t.Helper()
	rec := w.postStatic(t, body, nil)
	if rec.Code != 202 {
		t.Fatalf("post: %d %s", rec.Code, rec.Body)
	}
	var b struct{ Data struct{ ID string } }
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	return b.Data.ID
}

func TestWebhookEditAndDelete(t *testing.T) {
	w := newMemberWorld(t)
	id := w.acceptedID(t, `{"content":"Build 1042 passed"}`)
	path := "/webhooks/" + w.static.ID + "/messages/" + id
	secret := map[string]string{"X-Service-Webhook-Secret": w.static.Secret}

	if rec := w.do(t, "PATCH", path, `{"content":"x"}`, nil); rec.Code != 401 || codeOf(t, rec) != "missing_credentials" {
		t.Fatalf("no secret: got %d %s, want 401 missing_credentials", rec.Code, rec.Body)
	}
	// The warm cache holds the workspace: the edit is the webhook's
	// settings, quota, write, log.
	var rec = w.do(t, "PATCH", path, `{"content":"Build 1042 passed!"}`, secret)
	calls := w.calls(t, "webhook edit", func() { rec = w.do(t, "PATCH", path, `{"content":"Build 1042 failed"}`, secret) })
	if rec.Code != 200 || len(calls) > 4 {
		t.Fatalf("webhook edit: got %d %s with %d AWS calls %v, want 200 within 4", rec.Code, rec.Body, len(calls), calls)
	}
	var v struct{ Data editBody }
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil || v.Data.Revision != 3 || v.Data.Author.Type != "bot" {
		t.Fatalf("webhook edit view %s, want revision 3 by the bot", rec.Body)
	}
	if rec.Header().Get("X-RateLimit-Limit") == "" {
		t.Errorf("an edit carries no X-RateLimit-Limit")
	}
	// Another author's message, and the other webhook's: 404.
	benMsg := w.post(t, bearer(w.ben), "Ben's")
	if rec = w.do(t, "PATCH", "/webhooks/"+w.static.ID+"/messages/"+benMsg, `{"content":"x"}`, secret); rec.Code != 404 {
		t.Fatalf("a member's message: got %d %s, want 404", rec.Code, rec.Body)
	}
	if rec = w.do(t, "DELETE", "/webhooks/"+w.static.ID+"/messages/"+benMsg, "", secret); rec.Code != 404 {
		t.Fatalf("delete a member's message: got %d %s, want 404", rec.Code, rec.Body)
	}
	if rec = w.do(t, "PATCH", path, `{"content":"x","channel_id":"`+w.otherChannel+`"}`, secret); rec.Code != 422 {
		t.Fatalf("channel of another workspace: got %d %s, want 422", rec.Code, rec.Body)
	}
	calls = w.calls(t, "webhook delete", func() { rec = w.do(t, "DELETE", path, "", secret) })
	if rec.Code != 204 || len(calls) > 4 {
		t.Fatalf("webhook delete: got %d %s with %d AWS calls %v, want 204 within 4", rec.Code, rec.Body, len(calls), calls)
	}
	if rec = w.do(t, "PATCH", path, `{"content":"again"}`, secret); rec.Code != 410 {
		t.Fatalf("edit after delete: got %d %s, want 410", rec.Code, rec.Body)
	}
	log := w.requestLog(t, w.static.ID)
	var outcomes []string
	for _, r := range log[:5] {
		outcomes = append(outcomes, r.Outcome+":"+strconv.Itoa(r.Status))
	}
	want := "rejected:410 accepted:204 rejected:422 rejected:404 rejected:404"
	if got := strings.Join(outcomes, " "); got != want {
		t.Fatalf("request log, newest first: got %s, want %s", got, want)
	}
}

// A signed edit's signature is recorded before the edit applies: replayed
// after a later edit, it cannot undo it.
func TestSignedWebhookEditCannotBeReplayed(t *testing.T) {
	w := newMemberWorld(t)
	now := time.Now().Unix()
	body := `{"content":"Deploy 7 started"}`
	id, path := w.signedPost(t, body, now)
	var rec *httptest.ResponseRecorder
	// Warm the function's webhook cache with an edit that changes nothing.
	if rec = w.do(t, "PATCH", path, body, w.signedHeaders(body, now-1, nil)); rec.Code != 200 {
		t.Fatalf("no-op edit: %d %s", rec.Code, rec.Body)
	}
	edit1 := `{"content":"Deploy 7 done"}`
	h1 := w.signedHeaders(edit1, now, nil)
	var calls []string
	calls = w.calls(t, "signed edit", func() { rec = w.do(t, "PATCH", path, edit1, h1) })
	if rec.Code != 200 || len(calls) > 4 {
		t.Fatalf("signed edit: got %d %s with %d calls %v, want 200 within 4", rec.Code, rec.Body, len(calls), calls)
	}
	edit2 := `{"content":"Deploy 7 rolled back"}`
	if rec = w.do(t, "PATCH", path, edit2, w.signedHeaders(edit2, now, nil)); rec.Code != 200 {
		t.Fatalf("second edit: %d %s", rec.Code, rec.Body)
	}
	if rec = w.do(t, "PATCH", path, edit1, h1); rec.Code != 401 || codeOf(t, rec) != "signature_replayed" {
		t.Fatalf("replayed edit: got %d %s, want 401 signature_replayed", rec.Code, rec.Body)
	}
	if v := w.listed(t, bearer(w.ana), id); v.OriginalContent != "Deploy 7 rolled back" || v.Revision != 3 {
		t.Fatalf("after the replay: %+v, want the second edit at revision 3", v)
	}
	// A refused signed change is logged as refused, once.
	gone := "/webhooks/" + w.signed.ID + "/messages/" + w.post(t, bearer(w.ben), "Ben's")
	del := ""
	if rec = w.do(t, "DELETE", gone, del, w.signedHeaders(del, now, nil)); rec.Code != 404 {
		t.Fatalf("signed delete of a member's message: got %d %s, want 404", rec.Code, rec.Body)
	}
	if l := w.requestLog(t, w.signed.ID); l[0].Outcome != "rejected" || l[0].Status != 404 {
		t.Fatalf("newest log record %+v, want rejected 404", l[0])
	}
}

// TestSignedWebhookEditRetriedAfter503: a signed edit refused for now (503:
// the edit's write failed, nothing applied) may be sent again, the very
// same signed request, and applies: the 503 gave its signature back.
// Before, the retry was 401 signature_replayed and the edit was lost. A
// signed edit refused for its own fault (404) keeps its signature spent.
func TestSignedWebhookEditRetriedAfter503(t *testing.T) {
	w := newMemberWorld(t)
	now := time.Now().Unix()
	id, path := w.signedPost(t, `{"content":"Deploy 8 started"}`, now)
	edit := `{"content":"Deploy 8 done"}`
	h := w.signedHeaders(edit, now, nil)
	// The quota's UpdateItem goes through; the edit's own UpdateItem fails
	// as a throttled DynamoDB answers after the SDK's retries.
	w.st.Faults.FailWith("DynamoDB.UpdateItem", 1, 1, &types.ProvisionedThroughputExceededException{Message: aws.String("throttled (injected)")})
	if rec := w.do(t, "PATCH", path, edit, h); rec.Code != 503 {
		t.Fatalf("edit whose write failed: %d %s, want 503", rec.Code, rec.Body)
	}
	rec := w.do(t, "PATCH", path, edit, h)
	if rec.Code != 200 {
		t.Fatalf("the same signed edit again: %d %s, want 200", rec.Code, rec.Body)
	}
	if v := w.listed(t, bearer(w.ana), id); v.OriginalContent != "Deploy 8 done" || v.Revision != 2 {
		t.Fatalf("after the retry: %+v, want the edit at revision 2", v)
	}
	if rec = w.do(t, "PATCH", path, edit, h); rec.Code != 401 || codeOf(t, rec) != "signature_replayed" {
		t.Fatalf("replayed after it applied: %d %s, want 401 signature_replayed", rec.Code, rec.Body)
	}
	missing := "/webhooks/" + w.signed.ID + "/messages/01JDA0000000000000000000ZZ"
	h404 := w.signedHeaders(edit, now-2, nil)
	if rec = w.do(t, "PATCH", missing, edit, h404); rec.Code != 404 {
		t.Fatalf("edit of a missing message: %d %s, want 404", rec.Code, rec.Body)
	}
	if rec = w.do(t, "PATCH", missing, edit, h404); rec.Code != 401 || codeOf(t, rec) != "signature_replayed" {
		t.Fatalf("the same refused edit again: %d %s, want 401 signature_replayed", rec.Code, rec.Body)
	}
}
