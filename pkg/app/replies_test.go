package app_test

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
)

// thread reads the whole thread of id at base (a list path's
// .../messages), limit replies a page, following the cursors; it returns
// the replies and how many pages it took.
func (w *memberWorld) thread(t *testing.T, base, id string, hdr map[string]string, limit int) ([]threadBody, int) {
	t.Helper()
	var out []threadBody
	cur, pages := "", 0
	for {
		q := fmt.Sprintf("?limit=%d", limit)
		if cur != "" {
			q += "&cursor=" + url.QueryEscape(cur)
		}
		rec := w.do(t, "GET", base+"/"+id+"/replies"+q, "", hdr)
		if rec.Code != 200 {
			t.Fatalf("replies of %s: %d %s", id, rec.Code, rec.Body)
		}
		page := decodeAs[pageOf[threadBody]](t, rec.Body.Bytes())
		out, pages = append(out, page.Data...), pages+1
		if page.Meta.NextCursor == nil {
			return out, pages
		}
		if len(page.Data) == 0 {
			t.Fatalf("an empty page with a cursor: %s", rec.Body)
		}
		cur = *page.Meta.NextCursor
	}
}

// TestThreadReplies reads a thread on the member and guest paths (contract
// section 18): every reply (member, guest, webhook) oldest first, paged
// with a cursor, each in the reader's language (Ben's English reply is
// translated for Ana, who reads Spanish), a reply's id answering its root's
// thread, a deleted reply as a tombstone, a deleted root's thread still
// listed, and 404 for a message the channel does not have.
func TestThreadReplies(t *testing.T) {
	w := newMemberWorld(t)
	ana, ben := bearer(w.ana), bearer(w.ben)
	guest := w.joinGuest(t, "en")
	chanPath := w.wsPath("/channels/" + w.general + "/messages")
	roomPath := "/api/v1/external/rooms/" + w.room + "/messages"

	t.Setenv(translating.EnvTranslator, translating.TranslatorApertium)
	t.Setenv(translating.EnvApertiumURL, "http://127.0.0.1:9") // replaced below: no call reaches it
	svc, _, err := translating.Service(w.app.For(translating.Function))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	svc.Translator = upperTranslator{sent: func(string) { mu.Lock(); mu.Unlock() }}

	root := w.post(t, ana, "¿Quién revisa el despliegue?")
	other := w.post(t, ana, "Otro tema")
	var ids []string
	add := func(path string, hdr map[string]string, thread, content string) string {
		t.Helper()
		rec := w.reply(t, path, hdr, thread, content)
		if rec.Code != 201 && rec.Code != 202 {
			t.Fatalf("reply %q: %d %s", content, rec.Code, rec.Body)
		}
		id := decodeAs[struct{ Data threadBody }](t, rec.Body.Bytes()).Data.ID
		ids = append(ids, id)
		return id
	}
	first := add(chanPath, ben, root, "I will check the deploy")
	m := chat.Message{ID: first, WorkspaceID: w.ws.ID, ChannelID: w.general, SourceLanguage: "en", Content: "I will check the deploy", CreatedAt: time.Now(), ThreadID: root}
	if err := svc.Process(context.Background(), messages.JobOf(m)); err != nil {
		t.Fatal(err)
	}
	add(roomPath, guest, first, "Thanks, the page is down for me")
	add("/webhooks/"+w.static.ID+"/messages", map[string]string{"X-Service-Webhook-Secret": w.static.Secret}, root, "Deploy 2.3.1 rolled back")
	last := add(chanPath, ana, root, "Gracias a todos")
	add(chanPath, ben, other, "Another thread")

	for _, c := range []struct {
		name, base string
		hdr        map[string]string
	}{{"member", chanPath, ana}, {"guest", roomPath, guest}} {
		for _, limit := range []int{1, 2, 4, 100} {
			got, pages := w.thread(t, c.base, root, c.hdr, limit)
			if len(got) != 4 {
				t.Fatalf("%s, limit %d: %d replies, want 4 (not the other thread's)", c.name, limit, len(got))
			}
			for i, v := range got {
				if v.ID != ids[i] || v.ThreadID == nil || *v.ThreadID != root {
					t.Fatalf("%s, limit %d: reply %d is %s in thread %v, want %s in %s (oldest first)", c.name, limit, i, v.ID, v.ThreadID, ids[i], root)
				}
			}
			if want := (4 + limit - 1) / limit; pages < want {
				t.Fatalf("%s, limit %d: %d pages, want at least %d", c.name, limit, pages, want)
			}
		}
	}
	byAna, _ := w.thread(t, chanPath, root, ana, 100)
	if byAna[0].Content != "I WILL CHECK THE DEPLOY" || byAna[0].Language != "es" {
		t.Fatalf("Ana reads Ben's reply as %q (%s), want it translated to Spanish", byAna[0].Content, byAna[0].Language)
	}
	byGuest, _ := w.thread(t, roomPath, root, guest, 100)
	if byGuest[0].Content != "I will check the deploy" {
		t.Fatalf("the English guest reads Ben's reply as %q, want the original", byGuest[0].Content)
	}
	// A reply's id answers its root's thread.
	if got, _ := w.thread(t, chanPath, last, ben, 100); len(got) != 4 || got[3].ID != last {
		t.Fatalf("the thread of reply %s: %d replies, want the root's 4", last, len(got))
	}
	// 404: unknown, malformed, another channel's (Ana is a member of random).
	otherRoot := w.do(t, "POST", w.wsPath("/channels/"+w.random+"/messages"), `{"content":"random"}`, ana)
	otherID := decodeAs[struct{ Data threadBody }](t, otherRoot.Body.Bytes()).Data.ID
	for _, id := range []string{"01JD9N2ZZZZZZZZZZZZZZZZZZZ", "not-an-id", otherID} {
		if rec := w.do(t, "GET", chanPath+"/"+id+"/replies", "", ana); rec.Code != 404 {
			t.Fatalf("member, replies of %s: %d %s, want 404", id, rec.Code, rec.Body)
		}
		if rec := w.do(t, "GET", roomPath+"/"+id+"/replies", "", guest); rec.Code != 404 {
			t.Fatalf("guest, replies of %s: %d %s, want 404", id, rec.Code, rec.Body)
		}
	}
	// A member of another channel only: 403 before any read.
	if rec := w.do(t, "GET", w.wsPath("/channels/"+w.random+"/messages/"+root+"/replies"), "", ben); rec.Code != 403 {
		t.Fatalf("Ben on random's path: %d %s, want 403", rec.Code, rec.Body)
	}
	// A deleted reply is a tombstone in the thread; a deleted root keeps it.
	if rec := w.do(t, "DELETE", w.msgPath(w.general, first), "", ben); rec.Code != 204 {
		t.Fatalf("delete reply: %d %s", rec.Code, rec.Body)
	}
	if rec := w.do(t, "DELETE", w.msgPath(w.general, root), "", ana); rec.Code != 204 {
		t.Fatalf("delete root: %d %s", rec.Code, rec.Body)
	}
	got, _ := w.thread(t, roomPath, root, guest, 3)
	if len(got) != 4 || !got[0].Deleted || got[0].Content != "" || got[1].Deleted {
		t.Fatalf("after the deletions: %+v, want 4 replies, the first a tombstone", got)
	}
	// The replies are not in the lists (threads collapsed).
	rec := w.do(t, "GET", chanPath+"?limit=100", "", ana)
	for _, v := range decodeAs[pageOf[threadBody]](t, rec.Body.Bytes()).Data {
		if v.ThreadID != nil {
			t.Fatalf("the channel list shows reply %s", v.ID)
		}
	}
}

// TestThreadRepliesCalls counts the AWS calls of a thread's page: the
// member path reads the token, the message and the index (and the page's
// translations when some reply has one for the reader).
func TestThreadRepliesCalls(t *testing.T) {
	w := newMemberWorld(t)
	ana, ben := bearer(w.ana), bearer(w.ben)
	chanPath := w.wsPath("/channels/" + w.general + "/messages")
	root := w.post(t, ana, "Root")
	for i := range 3 {
		if rec := w.reply(t, chanPath, ben, root, fmt.Sprint("reply ", i)); rec.Code != 201 {
			t.Fatalf("reply: %d %s", rec.Code, rec.Body)
		}
	}
	w.st.Calls.Reset()
	if rec := w.do(t, "GET", chanPath+"/"+root+"/replies", "", ana); rec.Code != 200 {
		t.Fatalf("replies: %d %s", rec.Code, rec.Body)
	}
	if got := w.st.Calls.Calls(); len(got) != 3 {
		t.Fatalf("calls %v, want 3 (the token's GetItem, the message's GetItem, the index's Query)", got)
	}
}
