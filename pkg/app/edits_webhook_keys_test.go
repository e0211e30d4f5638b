package app_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// keyOf is the log record's idempotency_key, "" for null.
func (r logRecord) keyOf() string {
	if r.IdempotencyKey == nil {
		return ""
	}
	return *r.IdempotencyKey
}

// TestWebhookEditIdempotencyKey: a webhook's PATCH and DELETE of a message
// take an Idempotency-Key as a post does: validated, recorded in the
// request log, the same request replayed (status and body, with
// Idempotent-Replayed) without changing anything, a different one (method,
// message, body) refused as reused, and only an applied change replayed.
func TestWebhookEditIdempotencyKey(t *testing.T) {
	w := newMemberWorld(t)
	id := w.acceptedID(t, `{"content":"Build 1 passed"}`)
	path := "/webhooks/" + w.static.ID + "/messages/" + id
	with := func(key string) map[string]string {
		return map[string]string{"X-Service-Webhook-Secret": w.static.Secret, "Idempotency-Key": key}
	}
	for _, bad := range []string{"k\x01", strings.Repeat("k", 256)} {
		if rec := w.do(t, "PATCH", path, `{"content":"Build 1 failed"}`, with(bad)); rec.Code != 400 || codeOf(t, rec) != "invalid_idempotency_key" {
			t.Fatalf("key %q: %d %s, want 400 invalid_idempotency_key", bad, rec.Code, rec.Body)
		}
	}
	if v := w.listed(t, bearer(w.ana), id); v.Revision != 1 {
		t.Fatalf("after invalid keys: revision %d, want 1 (nothing changed)", v.Revision)
	}

	var first *httptest.ResponseRecorder
	calls := w.calls(t, "edit with a key", func() { first = w.do(t, "PATCH", path, `{"content":"Build 1 failed"}`, with("e-1")) })
	if first.Code != 200 || first.Header().Get("Idempotent-Replayed") != "" || len(calls) > 5 {
		t.Fatalf("edit: %d (replayed %q) %s with %d calls %v, want a first 200 within 5 calls", first.Code,
			first.Header().Get("Idempotent-Replayed"), first.Body, len(calls), calls)
	}
	if l := w.requestLog(t, w.static.ID)[0]; l.Outcome != "accepted" || l.Status != 200 || l.keyOf() != "e-1" {
		t.Fatalf("log of the edit: %+v, want accepted 200 with its key", l)
	}
	// An edit by another request, then the first one again: a replay of
	// its answer, which changes nothing (it would undo the other edit).
	if rec := w.do(t, "PATCH", path, `{"content":"Build 1 fixed"}`, with("e-other")); rec.Code != 200 {
		t.Fatalf("another edit: %d %s", rec.Code, rec.Body)
	}
	var again *httptest.ResponseRecorder
	calls = w.calls(t, "replayed edit", func() { again = w.do(t, "PATCH", path, `{"content":"Build 1 failed"}`, with("e-1")) })
	if again.Code != 200 || again.Header().Get("Idempotent-Replayed") != "true" || again.Body.String() != first.Body.String() ||
		again.Header().Get("ETag") != first.Header().Get("ETag") || len(calls) > 4 {
		t.Fatalf("the same edit again: %d (replayed %q, ETag %q) %s with %d calls %v, want the first answer %s (ETag %q) replayed within 4 calls",
			again.Code, again.Header().Get("Idempotent-Replayed"), again.Header().Get("ETag"), again.Body, len(calls), calls, first.Body, first.Header().Get("ETag"))
	}
	if v := w.listed(t, bearer(w.ana), id); v.OriginalContent != "Build 1 fixed" || v.Revision != 3 {
		t.Fatalf("after the replay: %q at revision %d, want the other edit's at 3", v.OriginalContent, v.Revision)
	}
	if l := w.requestLog(t, w.static.ID)[0]; l.Outcome != "replayed" || l.Status != 200 || l.keyOf() != "e-1" || l.MessageID == nil || *l.MessageID != id {
		t.Fatalf("log of the replay: %+v, want replayed 200 with its key and message", l)
	}
	// The same key with another request: another body, message or method.
	other := w.acceptedID(t, `{"content":"Build 2 passed"}`)
	for _, c := range []struct{ method, path, body string }{
		{"PATCH", path, `{"content":"Build 1 failed twice"}`},
		{"PATCH", path, `{"content":"Build 1 failed","channel_id":"` + w.random + `"}`},
		// The same content with attachments (none, here: the list is
		// part of the request) is another request.
		{"PATCH", path, `{"content":"Build 1 failed","attachments":[]}`},
		{"PATCH", "/webhooks/" + w.static.ID + "/messages/" + other, `{"content":"Build 1 failed"}`},
		{"DELETE", path, ""},
	} {
		if rec := w.do(t, c.method, c.path, c.body, with("e-1")); rec.Code != 422 || codeOf(t, rec) != "idempotency_key_reused" {
			t.Fatalf("%s %s %s with the key: %d %s, want 422 idempotency_key_reused", c.method, c.path, c.body, rec.Code, rec.Body)
		}
	}
	// Naming the webhook's own channel is the same request as naming none.
	if rec := w.do(t, "PATCH", path, `{"content":"Build 1 failed","channel_id":"`+w.general+`"}`, with("e-1")); rec.Code != 200 || rec.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the same edit naming its channel: %d %s, want a replay", rec.Code, rec.Body)
	}
	// The key of a post is the same webhook's key: an edit with it is another request.
	if rec := w.postStatic(t, `{"content":"keyed post"}`, map[string]string{"Idempotency-Key": "p-1"}); rec.Code != 202 {
		t.Fatalf("keyed post: %d", rec.Code)
	}
	if rec := w.do(t, "PATCH", path, `{"content":"keyed post"}`, with("p-1")); rec.Code != 422 || codeOf(t, rec) != "idempotency_key_reused" {
		t.Fatalf("an edit with a post's key: %d %s, want 422 idempotency_key_reused", rec.Code, rec.Body)
	}
	// Only an applied change is replayed: a refused one leaves its key free.
	stale := with("e-2")
	stale["If-Match"] = "1"
	if rec := w.do(t, "PATCH", path, `{"content":"Build 1 retried"}`, stale); rec.Code != 412 {
		t.Fatalf("stale If-Match: %d %s, want 412", rec.Code, rec.Body)
	}
	if rec := w.do(t, "PATCH", path, `{"content":"Build 1 retried"}`, with("e-2")); rec.Code != 200 || rec.Header().Get("Idempotent-Replayed") != "" {
		t.Fatalf("the refused change retried with its key: %d (replayed %q) %s, want applied", rec.Code, rec.Header().Get("Idempotent-Replayed"), rec.Body)
	}

	// A deletion, then its replay: 204 again, with the header, no body.
	var del *httptest.ResponseRecorder
	calls = w.calls(t, "delete with a key", func() { del = w.do(t, "DELETE", path, "", with("d-1")) })
	if del.Code != 204 || del.Header().Get("Idempotent-Replayed") != "" || len(calls) > 5 {
		t.Fatalf("delete: %d %s with %d calls %v, want 204 within 5", del.Code, del.Body, len(calls), calls)
	}
	if rec := w.do(t, "DELETE", path, "", with("d-1")); rec.Code != 204 || rec.Header().Get("Idempotent-Replayed") != "true" || rec.Body.Len() != 0 {
		t.Fatalf("delete replayed: %d (replayed %q) %q, want 204 replayed", rec.Code, rec.Header().Get("Idempotent-Replayed"), rec.Body)
	}
	if l := w.requestLog(t, w.static.ID)[0]; l.Outcome != "replayed" || l.Status != 204 || l.keyOf() != "d-1" || l.MessageID == nil || *l.MessageID != id {
		t.Fatalf("log of the replayed delete: %+v", l)
	}
}

// TestWebhookEditKeyUnderConcurrency: twenty identical edits sent at once
// with one key make the change once: one answer is the change's, every
// other one its replay or 409 idempotency_key_in_use, and the log agrees.
func TestWebhookEditKeyUnderConcurrency(t *testing.T) {
	w := newMemberWorld(t)
	id := w.acceptedID(t, `{"content":"Release 3 started"}`)
	path := "/webhooks/" + w.static.ID + "/messages/" + id
	hdr := map[string]string{"X-Service-Webhook-Secret": w.static.Secret, "Idempotency-Key": "release-3"}
	// Warm the function's webhook cache.
	if rec := w.do(t, "PATCH", path, `{"content":"Release 3 started"}`, map[string]string{"X-Service-Webhook-Secret": w.static.Secret}); rec.Code != 200 {
		t.Fatalf("warm-up: %d %s", rec.Code, rec.Body)
	}
	const n = 20
	recs := make([]*httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			recs[i] = w.do(t, "PATCH", path, `{"content":"Release 3 done"}`, hdr)
		}()
	}
	close(start)
	wg.Wait()
	applied, replayed, busy := 0, 0, 0
	var body string
	for i, rec := range recs {
		switch {
		case rec.Code == 200 && rec.Header().Get("Idempotent-Replayed") == "":
			applied++
			body = rec.Body.String()
		case rec.Code == 200:
			replayed++
		case rec.Code == 409 && codeOf(t, rec) == "idempotency_key_in_use" && rec.Header().Get("Retry-After") != "":
			busy++
		default:
			t.Fatalf("request %d: %d %s, want 200 or 409 idempotency_key_in_use", i, rec.Code, rec.Body)
		}
	}
	if applied != 1 {
		t.Fatalf("%d applied, %d replayed, %d busy: want exactly one applied", applied, replayed, busy)
	}
	for _, rec := range recs {
		if rec.Code == 200 && rec.Body.String() != body {
			t.Fatalf("a replay answered %s, the change %s", rec.Body, body)
		}
	}
	if v := w.listed(t, bearer(w.ana), id); v.OriginalContent != "Release 3 done" || v.Revision != 2 {
		t.Fatalf("message %q at revision %d, want one edit (revision 2)", v.OriginalContent, v.Revision)
	}
	outcomes := map[string]int{}
	for _, l := range w.requestLog(t, w.static.ID)[:n] {
		if l.keyOf() != "release-3" {
			t.Fatalf("log record %+v without the key", l)
		}
		outcomes[fmt.Sprintf("%s:%d", l.Outcome, l.Status)]++
	}
	if outcomes["accepted:200"] != 1 || outcomes["replayed:200"] != replayed || outcomes["rejected:409"] != busy {
		t.Fatalf("log outcomes %v, want 1 accepted, %d replayed, %d rejected 409", outcomes, replayed, busy)
	}
	// Once the change is done, the key replays.
	if rec := w.do(t, "PATCH", path, `{"content":"Release 3 done"}`, hdr); rec.Code != 200 || rec.Header().Get("Idempotent-Replayed") != "true" || rec.Body.String() != body {
		t.Fatalf("after the burst: %d %s, want the replay", rec.Code, rec.Body)
	}
}

// TestSignedWebhookEditRetriedWithItsKey: a signed edit sent again as it
// was, with its key, is replayed, not refused as signature_replayed (the
// rule for posts, held for edits); its signature without the
// key stays spent.
func TestSignedWebhookEditRetriedWithItsKey(t *testing.T) {
	w := newMemberWorld(t)
	now := time.Now().Unix()
	post := `{"content":"Deploy 8 started"}`
	rec := w.do(t, "POST", w.postPath(w.signed.ID), post, w.signedHeaders(post, now, nil))
	if rec.Code != 202 {
		t.Fatalf("post: %d %s", rec.Code, rec.Body)
	}
	id := decodeAs[struct{ Data viewBody }](t, rec.Body.Bytes()).Data.ID
	path := "/webhooks/" + w.signed.ID + "/messages/" + id
	edit := `{"content":"Deploy 8 done"}`
	hdr := w.signedHeaders(edit, now, map[string]string{"Idempotency-Key": "deploy-8"})
	first := w.do(t, "PATCH", path, edit, hdr)
	retry := w.do(t, "PATCH", path, edit, hdr)
	if first.Code != 200 || retry.Code != 200 || retry.Header().Get("Idempotent-Replayed") != "true" || retry.Body.String() != first.Body.String() {
		t.Fatalf("signed edit %d, its retry %d (replayed %q) %s: want 200 and its replay", first.Code, retry.Code, retry.Header().Get("Idempotent-Replayed"), retry.Body)
	}
	delete(hdr, "Idempotency-Key")
	if rec := w.do(t, "PATCH", path, edit, hdr); rec.Code != 401 || codeOf(t, rec) != "signature_replayed" {
		t.Fatalf("its signature without the key: %d %s, want 401 signature_replayed", rec.Code, rec.Body)
	}
}

// TestWebhookEditFindsItsMessageInAnotherChannel: a message the webhook
// posted to another channel of its workspace is edited and deleted without
// channel_id (found by key reads of the workspace's channels); a message it
// did not post, there or anywhere, is still 404.
func TestWebhookEditFindsItsMessageInAnotherChannel(t *testing.T) {
	w := newMemberWorld(t)
	id := w.acceptedID(t, `{"content":"Nightly build passed","channel_id":"`+w.random+`"}`)
	path := "/webhooks/" + w.static.ID + "/messages/" + id
	secret := map[string]string{"X-Service-Webhook-Secret": w.static.Secret}
	// Warm the function's webhook cache with an edit that changes nothing.
	home := w.acceptedID(t, `{"content":"at home"}`)
	rec := w.do(t, "PATCH", "/webhooks/"+w.static.ID+"/messages/"+home, `{"content":"at home"}`, secret)
	if rec.Code != 200 {
		t.Fatalf("warm-up: %d %s", rec.Code, rec.Body)
	}
	// Quota, log, the edit in the webhook's channel, the key reads, the edit.
	calls := w.calls(t, "edit elsewhere", func() { rec = w.do(t, "PATCH", path, `{"content":"Nightly build failed"}`, secret) })
	if rec.Code != 200 || len(calls) > 6 {
		t.Fatalf("edit without channel_id of a message in another channel: %d %s with %d calls %v, want 200 within 6", rec.Code, rec.Body, len(calls), calls)
	}
	v := decodeAs[struct{ Data editBody }](t, rec.Body.Bytes()).Data
	if v.OriginalContent != "Nightly build failed" || v.Revision != 2 {
		t.Fatalf("edited view %s", rec.Body)
	}
	if rec = w.do(t, "DELETE", path, "", secret); rec.Code != 204 {
		t.Fatalf("delete without channel_id: %d %s, want 204", rec.Code, rec.Body)
	}
	if item := w.rawMessage(t, w.random, id); item["deleted_at"] == nil {
		t.Fatalf("the message in %s is not deleted: %v", w.random, item)
	}
	// Another author's message in that channel, and an id of none.
	ana := w.do(t, "POST", w.wsPath("/channels/"+w.random+"/messages"), `{"content":"Ana's"}`, bearer(w.ana))
	anaID := decodeAs[struct{ Data viewBody }](t, ana.Body.Bytes()).Data.ID
	for _, m := range []string{anaID, "01JDZ8Y7K3Q4W5E6R7T8Y9A0ZZ"} {
		if rec = w.do(t, "PATCH", "/webhooks/"+w.static.ID+"/messages/"+m, `{"content":"x"}`, secret); rec.Code != 404 || codeOf(t, rec) != "not_found" {
			t.Fatalf("edit of %s: %d %s, want 404 not_found", m, rec.Code, rec.Body)
		}
	}
}

// TestSignedWebhookEditWhoseAdmissionWasResent: the transaction that logs a
// signed edit and records its signature commits, its answer is lost and the
// SDK sends it again: it meets its own log record, and the edit is applied,
// not refused as signature_replayed by its own signature.
func TestSignedWebhookEditWhoseAdmissionWasResent(t *testing.T) {
	w := newMemberWorld(t)
	now := time.Now().Unix()
	post := `{"content":"Deploy 9 started"}`
	rec := w.do(t, "POST", w.postPath(w.signed.ID), post, w.signedHeaders(post, now, nil))
	if rec.Code != 202 {
		t.Fatalf("post: %d %s", rec.Code, rec.Body)
	}
	id := decodeAs[struct{ Data viewBody }](t, rec.Body.Bytes()).Data.ID
	edit := `{"content":"Deploy 9 done"}`
	w.st.Faults.LoseAnswer("DynamoDB.TransactWriteItems", 0)
	if rec = w.do(t, "PATCH", "/webhooks/"+w.signed.ID+"/messages/"+id, edit, w.signedHeaders(edit, now, nil)); rec.Code != 200 {
		t.Fatalf("signed edit whose admission was resent: %d %s, want 200", rec.Code, rec.Body)
	}
	if l := w.requestLog(t, w.signed.ID)[0]; l.Outcome != "accepted" || l.Status != 200 {
		t.Fatalf("log: %+v, want accepted 200", l)
	}
}
