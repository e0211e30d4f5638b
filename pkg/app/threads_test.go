package app_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// threadBody is a view with the thread fields of contract section 18.
type threadBody struct {
	editBody
	ThreadID    *string `json:"thread_id"`
	ReplyCount  int     `json:"reply_count"`
	LastReplyAt *string `json:"last_reply_at"`
}

// reply posts content into the thread of threadID at path with hdr and
// returns the answer.
func (w *memberWorld) reply(t *testing.T, path string, hdr map[string]string, threadID, content string) *httptest.ResponseRecorder {
	t.Helper()
	return w.do(t, "POST", path, fmt.Sprintf(`{"content":%q,"thread_id":%q}`, content, threadID), hdr)
}

// listThreads returns the general channel's list as hdr's member reads it.
func (w *memberWorld) listThreads(t *testing.T, path string, hdr map[string]string) []threadBody {
	t.Helper()
	rec := w.do(t, "GET", path, "", hdr)
	if rec.Code != 200 {
		t.Fatalf("list %s: %d %s", path, rec.Code, rec.Body)
	}
	return decodeAs[pageOf[threadBody]](t, rec.Body.Bytes()).Data
}

// A thread across a member, a guest and a webhook: each reply is stored
// with its root's id, the root counts them, the lists show the root only,
// a reply to a reply joins the root, and a reply's edit and deletion leave
// the count as it was.
func TestThreadAcrossPaths(t *testing.T) {
	w := newMemberWorld(t)
	ana, ben := bearer(w.ana), bearer(w.ben)
	guest := w.joinGuest(t, "en")
	chanPath := w.wsPath("/channels/" + w.general + "/messages")
	roomPath := "/api/v1/external/rooms/" + w.room + "/messages"
	root := w.post(t, ana, "Release today?")
	before := w.count(t, "MSG#")

	rec := w.reply(t, chanPath, ben, root, "Yes, at five")
	if rec.Code != 201 {
		t.Fatalf("member reply: %d %s", rec.Code, rec.Body)
	}
	r1 := decodeAs[struct{ Data threadBody }](t, rec.Body.Bytes()).Data
	if r1.ThreadID == nil || *r1.ThreadID != root || r1.ReplyCount != 0 || r1.LastReplyAt != nil {
		t.Fatalf("member reply's view %s, want thread_id %s, reply_count 0, last_reply_at null", rec.Body, root)
	}
	rec = w.reply(t, roomPath, guest, r1.ID, "Great")
	if rec.Code != 201 {
		t.Fatalf("guest reply to a reply: %d %s", rec.Code, rec.Body)
	}
	r2 := decodeAs[struct{ Data threadBody }](t, rec.Body.Bytes()).Data
	if r2.ThreadID == nil || *r2.ThreadID != root {
		t.Fatalf("guest's reply to a reply %s, want it in the root's thread %s", rec.Body, root)
	}
	secret := map[string]string{"X-Service-Webhook-Secret": w.static.Secret, "Idempotency-Key": "thread-1"}
	body := fmt.Sprintf(`{"content":"Build green","thread_id":%q}`, root)
	rec = w.do(t, "POST", "/webhooks/"+w.static.ID+"/messages", body, secret)
	if rec.Code != 202 || !strings.Contains(rec.Body.String(), `"thread_id":"`+root+`"`) {
		t.Fatalf("webhook reply: %d %s, want 202 with thread_id %s", rec.Code, rec.Body, root)
	}
	first := rec.Body.String()
	rec = w.do(t, "POST", "/webhooks/"+w.static.ID+"/messages", body, secret)
	if rec.Code != 202 || rec.Body.String() != first {
		t.Fatalf("webhook replay: %d %s, want the first 202 byte for byte: %s", rec.Code, rec.Body, first)
	}
	if got := w.count(t, "MSG#"); got != before+3 {
		t.Fatalf("%d messages stored, want %d (three replies; the replay writes none)", got, before+3)
	}
	raw := w.rawMessage(t, w.general, r2.ID)
	if v, ok := raw["thread_id"]; !ok || fmt.Sprint(v) != fmt.Sprint(w.rawMessage(t, w.general, r1.ID)["thread_id"]) {
		t.Fatalf("stored reply %v, want thread_id %s", raw, root)
	}

	for name, list := range map[string]func() []threadBody{
		"member": func() []threadBody { return w.listThreads(t, chanPath+"?limit=100", ana) },
		"guest":  func() []threadBody { return w.listThreads(t, roomPath+"?limit=100", guest) },
	} {
		items := list()
		var found *threadBody
		for i, v := range items {
			if v.ThreadID != nil {
				t.Fatalf("%s list shows reply %s: threads are collapsed", name, v.ID)
			}
			if v.ID == root {
				found = &items[i]
			}
		}
		if found == nil || found.ReplyCount != 3 || found.LastReplyAt == nil {
			t.Fatalf("%s list's root %+v, want reply_count 3 and last_reply_at", name, found)
		}
	}

	// A reply edited then deleted stays in the count.
	if rec = w.do(t, "PATCH", w.msgPath(w.general, r1.ID), `{"content":"Yes, at six"}`, ben); rec.Code != 200 {
		t.Fatalf("edit reply: %d %s", rec.Code, rec.Body)
	}
	if v := decodeAs[struct{ Data threadBody }](t, rec.Body.Bytes()).Data; v.ThreadID == nil || *v.ThreadID != root {
		t.Fatalf("edited reply %s, want its thread_id kept", rec.Body)
	}
	if rec = w.do(t, "DELETE", w.msgPath(w.general, r1.ID), "", ben); rec.Code != 204 {
		t.Fatalf("delete reply: %d %s", rec.Code, rec.Body)
	}
	for _, v := range w.listThreads(t, chanPath+"?limit=100", ana) {
		if v.ID == root && v.ReplyCount != 3 {
			t.Fatalf("root after a reply's deletion: reply_count %d, want 3 (tombstones count)", v.ReplyCount)
		}
	}
	// A deleted reply is no way into its thread: the reply joins the root.
	if rec = w.reply(t, chanPath, ana, r1.ID, "Via a deleted reply"); rec.Code != 201 ||
		*decodeAs[struct{ Data threadBody }](t, rec.Body.Bytes()).Data.ThreadID != root {
		t.Fatalf("reply to a deleted reply: %d %s, want 201 in the root's thread", rec.Code, rec.Body)
	}

	// A deleted root keeps its thread and refuses new replies.
	if rec = w.do(t, "DELETE", w.msgPath(w.general, root), "", ana); rec.Code != 204 {
		t.Fatalf("delete root: %d %s", rec.Code, rec.Body)
	}
	for _, v := range w.listThreads(t, chanPath+"?limit=100", ana) {
		if v.ID == root && (!v.Deleted || v.ReplyCount != 4 || v.LastReplyAt == nil) {
			t.Fatalf("deleted root %+v, want a tombstone with reply_count 4 and last_reply_at", v)
		}
	}
	n := w.count(t, "MSG#")
	for name, target := range map[string]string{"deleted root": root, "reply of a deleted root": r2.ID} {
		rec = w.reply(t, chanPath, ana, target, "Too late")
		if rec.Code != 422 || !strings.Contains(rec.Body.String(), `"thread_id"`) {
			t.Fatalf("%s: %d %s, want 422 on thread_id", name, rec.Code, rec.Body)
		}
	}
	if got := w.count(t, "MSG#"); got != n {
		t.Fatalf("%d messages after refused replies, want %d", got, n)
	}
}

// Hostile thread ids: each is 422 on thread_id on every path, and nothing
// is written.
func TestThreadIDsRefused(t *testing.T) {
	w := newMemberWorld(t)
	ana := bearer(w.ana)
	guest := w.joinGuest(t, "en")
	elsewhere := w.postIn(t, ana, w.random, "In random")
	unknown := "01JD0000000000000000000000"
	values := map[string]string{
		"another channel's": fmt.Sprintf("%q", elsewhere),
		"unknown":           fmt.Sprintf("%q", unknown),
		"empty":             `""`,
		"number":            `123`,
		"path":              `"../x"`,
		"long":              fmt.Sprintf("%q", strings.Repeat("A", 10000)),
		"line separator":    `"01JD\u2028000000000000000000000"`,
		"object":            `{}`,
	}
	paths := map[string]struct {
		path string
		hdr  map[string]string
	}{
		"member":  {w.wsPath("/channels/" + w.general + "/messages"), ana},
		"guest":   {"/api/v1/external/rooms/" + w.room + "/messages", guest},
		"webhook": {"/webhooks/" + w.static.ID + "/messages", map[string]string{"X-Service-Webhook-Secret": w.static.Secret}},
	}
	before := w.count(t, "MSG#")
	for pname, p := range paths {
		for vname, v := range values {
			rec := w.do(t, "POST", p.path, `{"content":"hostile","thread_id":`+v+`}`, p.hdr)
			if rec.Code != 422 || !strings.Contains(rec.Body.String(), `"thread_id"`) {
				t.Errorf("%s, %s thread_id: %d %s, want 422 on thread_id", pname, vname, rec.Code, rec.Body)
			}
		}
		// null is a root.
		if rec := w.do(t, "POST", p.path, `{"content":"root","thread_id":null}`, p.hdr); rec.Code/100 != 2 {
			t.Errorf("%s, null thread_id: %d %s, want a root posted", pname, rec.Code, rec.Body)
		}
	}
	if got := w.count(t, "MSG#"); got != before+3 {
		t.Fatalf("%d messages, want %d: the hostile replies wrote nothing", got, before+3)
	}
}

// postIn posts content as hdr's member in channel and returns its id.
func (w *memberWorld) postIn(t *testing.T, hdr map[string]string, channel, content string) string {
	t.Helper()
	rec := w.do(t, "POST", w.wsPath("/channels/"+channel+"/messages"), fmt.Sprintf(`{"content":%q}`, content), hdr)
	if rec.Code != 201 {
		t.Fatalf("post: %d %s", rec.Code, rec.Body)
	}
	return decodeAs[struct{ Data viewBody }](t, rec.Body.Bytes()).Data.ID
}

// A burst of 30 concurrent replies into one thread: every one is
// accepted, no 5xx, and the root counts exactly 30; last_reply_at is the
// newest reply's.
func TestThreadBurst(t *testing.T) {
	w := newMemberWorld(t)
	ana := bearer(w.ana)
	older := w.post(t, ana, "Older root")
	root := w.post(t, ana, "Incident channel")
	path := "/webhooks/" + w.static.ID + "/messages"
	secret := map[string]string{"X-Service-Webhook-Secret": w.static.Secret}
	var wg sync.WaitGroup
	codes := make([]int, 30)
	bodies := make([]string, 30)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rec *httptest.ResponseRecorder
			if i%2 == 0 {
				rec = w.reply(t, path, secret, root, fmt.Sprintf("alert %d", i))
			} else {
				rec = w.reply(t, w.wsPath("/channels/"+w.general+"/messages"), ana, root, fmt.Sprintf("ack %d", i))
			}
			codes[i], bodies[i] = rec.Code, rec.Body.String()
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 201 && c != 202 {
			t.Errorf("reply %d: %d %s", i, c, bodies[i])
		}
	}
	raw := w.rawMessage(t, w.general, root)
	if got := fmt.Sprint(raw["reply_count"]); got != "&{30 {}}" {
		t.Fatalf("root's reply_count %s, want 30", got)
	}
	// The 30 replies are newer than both roots: a page of one is read on
	// past them (the filter leaves them out), never empty, and its cursor
	// leads to the older root.
	rec := w.do(t, "GET", w.wsPath("/channels/"+w.general+"/messages?limit=1"), "", ana)
	page := decodeAs[pageOf[threadBody]](t, rec.Body.Bytes())
	if len(page.Data) != 1 || page.Data[0].ID != root || page.Data[0].ReplyCount != 30 || page.Meta.NextCursor == nil {
		t.Fatalf("first page of one: %s, want the incident root with 30 replies and a next cursor", rec.Body)
	}
	rec = w.do(t, "GET", w.wsPath("/channels/"+w.general+"/messages?limit=1&cursor="+*page.Meta.NextCursor), "", ana)
	if page = decodeAs[pageOf[threadBody]](t, rec.Body.Bytes()); len(page.Data) != 1 || page.Data[0].ID != older {
		t.Fatalf("second page of one: %s, want the older root", rec.Body)
	}
}

// The calls of a reply: a root's post plus one consistent GetItem of the
// target, and the write is one TransactWriteItems instead of a PutItem.
func TestThreadCallBudget(t *testing.T) {
	w := newMemberWorld(t)
	ana := bearer(w.ana)
	path := w.wsPath("/channels/" + w.general + "/messages")
	var root string
	plain := w.calls(t, "root post", func() { root = w.post(t, ana, "root") })
	reply := w.calls(t, "reply post", func() {
		if rec := w.reply(t, path, ana, root, "reply"); rec.Code != 201 {
			t.Fatalf("reply: %d %s", rec.Code, rec.Body)
		}
	})
	if len(reply) != len(plain)+1 {
		t.Fatalf("reply: %d calls %v, want %d (a root post's %v and one GetItem)", len(reply), reply, len(plain)+1, plain)
	}
	if strings.Join(reply, " ") == strings.Join(plain, " ") || !strings.Contains(strings.Join(reply, " "), "GetItem") ||
		!strings.Contains(strings.Join(reply, " "), "TransactWriteItems") {
		t.Fatalf("reply's calls %v, want a GetItem and a TransactWriteItems", reply)
	}
}

// A member's reply with an Idempotency-Key: stored once in the root's
// thread (the keyed transaction also counts it on the root), replayed
// after; the same key on another thread is a reused key.
func TestThreadReplyWithIdempotencyKey(t *testing.T) {
	w := newMemberWorld(t)
	ana := bearer(w.ana)
	path := w.wsPath("/channels/" + w.general + "/messages")
	root := w.post(t, ana, "root")
	other := w.post(t, ana, "other root")
	keyed := with(ana, "Idempotency-Key", "reply-1")
	first := w.reply(t, path, keyed, root, "keyed reply")
	if first.Code != 201 || !strings.Contains(first.Body.String(), `"thread_id":"`+root+`"`) {
		t.Fatalf("keyed reply: %d %s", first.Code, first.Body)
	}
	again := w.reply(t, path, keyed, root, "keyed reply")
	if again.Code != 201 || again.Header().Get("Idempotent-Replayed") != "true" || again.Body.String() != first.Body.String() {
		t.Fatalf("replay: %d %s, want the first answer replayed", again.Code, again.Body)
	}
	if rec := w.reply(t, path, keyed, other, "keyed reply"); rec.Code != 422 && rec.Code != 409 {
		t.Fatalf("the key on another thread: %d %s, want it refused as reused", rec.Code, rec.Body)
	}
	if got := fmt.Sprint(w.rawMessage(t, w.general, root)["reply_count"]); got != "&{1 {}}" {
		t.Fatalf("root's reply_count %s, want 1", got)
	}
	if _, ok := w.rawMessage(t, w.general, other)["reply_count"]; ok {
		t.Fatalf("the other root counts a reply")
	}
}
