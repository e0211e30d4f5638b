package app_test

import (
	"context"
	"fmt"
	"github.com/chatbridge/chat/internal/racetest"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/edits"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/translation"
)

// editBody is a view with the fields of contract section 13.
type editBody struct {
	viewBody
	Revision  int     `json:"revision"`
	EditedAt  *string `json:"edited_at"`
	Deleted   bool    `json:"deleted"`
	DeletedAt string  `json:"deleted_at"`
}

func (w *memberWorld) msgPath(channel, id string) string {
	return w.wsPath("/channels/" + channel + "/messages/" + id)
}

// post posts content as u in general and returns the message id.
func (w *memberWorld) post(t *testing.T, hdr map[string]string, content string) string {
	t.Helper()
	rec := w.do(t, "POST", w.wsPath("/channels/"+w.general+"/messages"), fmt.Sprintf(`{"content":%q}`, content), hdr)
	if rec.Code != 201 {
		t.Fatalf("post: %d %s", rec.Code, rec.Body)
	}
	return decodeAs[struct{ Data viewBody }](t, rec.Body.Bytes()).Data.ID
}

// joinGuest joins the world's room in lang and returns the guest token.
func (w *memberWorld) joinGuest(t *testing.T, lang string) map[string]string {
	t.Helper()
	rec := w.do(t, "POST", "/api/v1/external/rooms/"+w.room+"/guests", `{"nickname":"G","preferred_language":"`+lang+`"}`, nil)
	if rec.Code != 201 {
		t.Fatalf("join: %d %s", rec.Code, rec.Body)
	}
	tok := decodeAs[struct {
		Data struct {
			Session struct{ Token string } `json:"session"`
		} `json:"data"`
	}](t, rec.Body.Bytes()).Data.Session.Token
	return map[string]string{"X-Service-Guest-Token": tok}
}

// listed returns message id as u reads it in general's list.
func (w *memberWorld) listed(t *testing.T, hdr map[string]string, id string) editBody {
	t.Helper()
	rec := w.do(t, "GET", w.wsPath("/channels/"+w.general+"/messages?limit=100"), "", hdr)
	for _, v := range decodeAs[pageOf[editBody]](t, rec.Body.Bytes()).Data {
		if v.ID == id {
			return v
		}
	}
	t.Fatalf("message %s not in the list %s", id, rec.Body)
	return editBody{}
}

func (w *memberWorld) rawMessage(t *testing.T, channel, id string) map[string]types.AttributeValue {
	t.Helper()
	out, err := w.st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(w.st.Table),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "CHAN#" + channel},
			"sk": &types.AttributeValueMemberS{Value: "MSG#" + id}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

func with(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func TestMemberEditAndDelete(t *testing.T) {
	w := newMemberWorld(t)
	ben, ana := bearer(w.ben), bearer(w.ana)
	id := w.post(t, ben, "Hi Ana, let me check")
	path := w.msgPath(w.general, id)
	translate := func(rev int, text string) {
		t.Helper()
		if err := storetest.New(w.app.DB, w.app.Table).Translation.SaveRevision(context.Background(), w.general, id, rev, []chat.Translation{{MessageID: id, Language: "es",
			Content: text, CreatedAt: time.Now()}}, true); err != nil {
			t.Fatal(err)
		}
	}
	translate(1, "Hola Ana, déjame ver")

	var rec = w.do(t, "PATCH", path, `{"content":"x"}`, ana)
	if rec.Code != 403 {
		t.Fatalf("Ana edits Ben's message: got %d %s, want 403", rec.Code, rec.Body)
	}
	calls := w.calls(t, "member edit", func() { rec = w.do(t, "PATCH", path, `{"content":"Hi Ana, let me check now"}`, ben) })
	if rec.Code != 200 || len(calls) > 3 {
		t.Fatalf("edit: got %d %s with %d AWS calls %v, want 200 within 3", rec.Code, rec.Body, len(calls), calls)
	}
	v := decodeAs[struct{ Data editBody }](t, rec.Body.Bytes()).Data
	if v.Revision != 2 || v.EditedAt == nil || v.Content != "Hi Ana, let me check now" || v.Translated || v.Deleted {
		t.Fatalf("edited view %s, want revision 2, edited_at set, the new original", rec.Body)
	}
	if got := rec.Header().Get("ETag"); got != `"2"` {
		t.Errorf("ETag: got %q, want %q", got, `"2"`)
	}
	if l := w.listed(t, ana, id); l.Revision != 2 || l.OriginalContent != "Hi Ana, let me check now" || l.EditedAt == nil {
		t.Fatalf("Ana's list shows %+v, want revision 2 with the new content", l)
	}
	if rec = w.do(t, "PATCH", path, `{"content":"stale"}`, with(ben, "If-Match", "1")); rec.Code != 412 || !strings.Contains(rec.Body.String(), "revision_mismatch") {
		t.Fatalf("stale If-Match: got %d %s, want 412 revision_mismatch", rec.Code, rec.Body)
	}
	if rec = w.do(t, "PATCH", path, `{"content":"stale"}`, with(ben, "If-Match", "banana")); rec.Code != 412 {
		t.Fatalf("If-Match that is no revision: got %d %s, want 412", rec.Code, rec.Body)
	}
	calls = w.calls(t, "no-op edit", func() {
		rec = w.do(t, "PATCH", path, `{"content":"Hi Ana, let me check now"}`, with(ben, "If-Match", `"2"`))
	})
	if rec.Code != 200 || decodeAs[struct{ Data editBody }](t, rec.Body.Bytes()).Data.Revision != 2 || len(calls) > 2 {
		t.Fatalf("no-op edit: got %d %s with %d calls, want 200 at revision 2 within 2 calls", rec.Code, rec.Body, len(calls))
	}
	for _, c := range []struct {
		name, path, body string
		status           int
	}{
		{"unknown id", w.msgPath(w.general, chat.NewIDs().New(time.Now())), `{"content":"x"}`, 404},
		{"malformed id", w.msgPath(w.general, "nope"), `{"content":"x"}`, 404},
		{"another channel", w.msgPath(w.random, id), `{"content":"x"}`, 403},
		{"another workspace's channel", w.msgPath(w.otherChannel, id), `{"content":"x"}`, 403},
		{"blank content", path, `{"content":" \u200b "}`, 422},
		{"too long", path, fmt.Sprintf(`{"content":%q}`, strings.Repeat("a", messages.MaxContentLen+1)), 422},
		{"at the limit in emoji is past 64 KiB", path, fmt.Sprintf(`{"content":%q}`, strings.Repeat("😀", messages.MaxContentLen)), 413},
		{"not an object", path, `[]`, 400},
	} {
		if rec := w.do(t, "PATCH", c.path, c.body, ben); rec.Code != c.status {
			t.Errorf("%s: got %d %s, want %d", c.name, rec.Code, rec.Body, c.status)
		}
	}

	translate(2, "Hola Ana, déjame ver ahora")
	if l := w.listed(t, ana, id); l.Content != "Hola Ana, déjame ver ahora" || !l.Translated {
		t.Fatalf("Ana reads %+v, want the revision 2 translation", l)
	}
	calls = w.calls(t, "member delete", func() { rec = w.do(t, "DELETE", path, "", ben) })
	if rec.Code != 204 || len(calls) > 3 {
		t.Fatalf("delete: got %d %s with %d AWS calls %v, want 204 within 3", rec.Code, rec.Body, len(calls), calls)
	}
	if l := w.listed(t, ana, id); !l.Deleted || l.DeletedAt == "" || l.Content != "" || l.OriginalContent != "" {
		t.Fatalf("tombstone %+v, want deleted with no content", l)
	}
	if item := w.rawMessage(t, w.general, id); item["content"] != nil || item["deleted_at"] == nil {
		t.Fatalf("stored item after delete %v, want no content and deleted_at", item)
	}
	if rec = w.do(t, "PATCH", path, `{"content":"back"}`, ben); rec.Code != 410 || !strings.Contains(rec.Body.String(), "message_deleted") {
		t.Fatalf("edit after delete: got %d %s, want 410 message_deleted", rec.Code, rec.Body)
	}
	if rec = w.do(t, "DELETE", path, "", ben); rec.Code != 204 {
		t.Fatalf("delete again: got %d %s, want 204", rec.Code, rec.Body)
	}
}

func TestAdminDeletesAnotherUsersMessage(t *testing.T) {
	w := newMemberWorld(t)
	id := w.post(t, bearer(w.ben), "Ben's message")
	if rec := w.do(t, "DELETE", w.msgPath(w.general, id), "", bearer(w.ana)); rec.Code != 204 {
		t.Fatalf("admin delete: got %d %s, want 204", rec.Code, rec.Body)
	}
	if n := w.count(t, "EVT#"); n != 1 {
		t.Fatalf("audit events after an admin's deletion: got %d, want 1", n)
	}
	// Deleting it again: the audited write's condition fails and its
	// answer carries the message as it is (ALL_OLD), so no read follows;
	// no second audit event.
	var rec *httptest.ResponseRecorder
	calls := w.calls(t, "an admin deletes a tombstone", func() { rec = w.do(t, "DELETE", w.msgPath(w.general, id), "", bearer(w.ana)) })
	if rec.Code != 204 || w.count(t, "EVT#") != 1 {
		t.Fatalf("admin deletes again: %d, %d audit events; want 204 and still 1", rec.Code, w.count(t, "EVT#"))
	}
	for _, c := range calls {
		if c == "DynamoDB.GetItem" && len(calls) > 2 {
			t.Fatalf("calls %v: the message was read again after the cancelled transaction", calls)
		}
	}
	own := w.post(t, bearer(w.ana), "Ana's message")
	if rec := w.do(t, "DELETE", w.msgPath(w.general, own), "", bearer(w.ben)); rec.Code != 403 {
		t.Fatalf("a member deletes the admin's message: got %d %s, want 403", rec.Code, rec.Body)
	}
	if rec := w.do(t, "DELETE", w.msgPath(w.general, own), "", bearer(w.ana)); rec.Code != 204 {
		t.Fatalf("admin deletes own: got %d, want 204", rec.Code)
	}
	if n := w.count(t, "EVT#"); n != 1 {
		t.Fatalf("audit events after deleting one's own: got %d, want still 1", n)
	}
}

func TestGuestEditAndDelete(t *testing.T) {
	w := newMemberWorld(t)
	g, other := w.joinGuest(t, "es-ES"), w.joinGuest(t, "en")
	rec := w.do(t, "POST", "/api/v1/external/rooms/"+w.room+"/messages", `{"content":"Hola"}`, g)
	id := decodeAs[struct{ Data viewBody }](t, rec.Body.Bytes()).Data.ID
	path := "/api/v1/external/rooms/" + w.room + "/messages/" + id
	if rec = w.do(t, "PATCH", path, `{"content":"no"}`, other); rec.Code != 403 {
		t.Fatalf("another guest edits: got %d %s, want 403", rec.Code, rec.Body)
	}
	benMsg := w.post(t, bearer(w.ben), "Ben")
	if rec = w.do(t, "DELETE", "/api/v1/external/rooms/"+w.room+"/messages/"+benMsg, "", g); rec.Code != 403 {
		t.Fatalf("a guest deletes a member's message: got %d %s, want 403", rec.Code, rec.Body)
	}
	calls := w.calls(t, "guest edit", func() { rec = w.do(t, "PATCH", path, `{"content":"Hola, buenas"}`, g) })
	if rec.Code != 200 || len(calls) > 3 {
		t.Fatalf("guest edit: got %d %s with %d AWS calls %v, want 200 within 3", rec.Code, rec.Body, len(calls), calls)
	}
	if v := decodeAs[struct{ Data editBody }](t, rec.Body.Bytes()).Data; v.Revision != 2 || v.OriginalContent != "Hola, buenas" {
		t.Fatalf("guest edit view %s, want revision 2", rec.Body)
	}
	calls = w.calls(t, "guest delete", func() { rec = w.do(t, "DELETE", path, "", g) })
	if rec.Code != 204 || len(calls) > 3 {
		t.Fatalf("guest delete: got %d %s with %d AWS calls %v, want 204 within 3", rec.Code, rec.Body, len(calls), calls)
	}
	if rec = w.do(t, "PATCH", path, `{"content":"again"}`, g); rec.Code != 410 {
		t.Fatalf("edit a deleted message: got %d %s, want 410", rec.Code, rec.Body)
	}
	// A closed room: its guests' edits get 410 temporary_room_expired.
	rec = w.do(t, "POST", "/api/v1/external/rooms/"+w.room+"/messages", `{"content":"otra"}`, g)
	id2 := decodeAs[struct{ Data viewBody }](t, rec.Body.Bytes()).Data.ID
	if rec = w.do(t, "POST", w.wsPath("/rooms/"+w.room+"/close"), "", bearer(w.ana)); rec.Code != 200 {
		t.Fatalf("close: %d %s", rec.Code, rec.Body)
	}
	if rec = w.do(t, "PATCH", "/api/v1/external/rooms/"+w.room+"/messages/"+id2, `{"content":"x"}`, g); rec.Code != 410 || !strings.Contains(rec.Body.String(), "temporary_room_expired") {
		t.Fatalf("edit in a closed room: got %d %s, want 410 temporary_room_expired", rec.Code, rec.Body)
	}
}

// fixedTranslator translates into "en" as "<text> [en]" and counts the
// characters it was sent.
type fixedTranslator struct {
	mu    sync.Mutex
	chars int
	gate  chan struct{}
}

func (f *fixedTranslator) Targets(context.Context, string) (*translation.Languages, error) {
	return translation.NewLanguages("en", "es"), nil
}

func (f *fixedTranslator) Translate(_ context.Context, text, _, target string) (translation.Result, error) {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	f.chars += len([]rune(text))
	f.mu.Unlock()
	return translation.Result{Text: text + " [" + target + "]"}, nil
}

// An older revision's job delivered last never lands over the newer
// translation; one racing the edit (it read the old content, saves after
// the edit) is refused.
func TestTranslationPerRevision(t *testing.T) {
	w := newMemberWorld(t)
	ctx := context.Background()
	es := w.joinGuest(t, "es-ES")
	rec := w.do(t, "POST", "/api/v1/external/rooms/"+w.room+"/messages", `{"content":"Hola"}`, es)
	id := decodeAs[struct{ Data viewBody }](t, rec.Body.Bytes()).Data.ID
	tr := &fixedTranslator{}
	svc := &translation.Service{Store: storetest.New(w.app.DB, w.app.Table).Translation, Translator: tr}
	job := func() messages.Job {
		t.Helper()
		page, err := storetest.New(w.app.DB, w.app.Table).Rooms.ListMessages(ctx, w.general, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.Items {
			if m.ID == id {
				return messages.JobOf(m)
			}
		}
		t.Fatalf("message %s not stored", id)
		return messages.Job{}
	}
	rev1 := job()
	if err := svc.Process(ctx, rev1); err != nil {
		t.Fatal(err)
	}
	if v := w.listed(t, bearer(w.ben), id); v.Content != "Hola [en]" || !v.Translated {
		t.Fatalf("Ben reads %+v, want the revision 1 translation", v)
	}
	if rec = w.do(t, "PATCH", "/api/v1/external/rooms/"+w.room+"/messages/"+id, `{"content":"Hola, buenas"}`, es); rec.Code != 200 {
		t.Fatalf("edit: %d %s", rec.Code, rec.Body)
	}
	if v := w.listed(t, bearer(w.ben), id); v.Content != "Hola, buenas" || v.Translated || v.Revision != 2 {
		t.Fatalf("after the edit Ben reads %+v, want the new original, untranslated", v)
	}
	rev2 := job()
	if rev2.Rev() != 2 {
		t.Fatalf("job revision: got %d, want 2", rev2.Rev())
	}
	tr.chars = 0
	if err := svc.Process(ctx, rev2); err != nil {
		t.Fatal(err)
	}
	if tr.chars != len([]rune("Hola, buenas")) {
		t.Errorf("characters translated for the edit: got %d, want %d (only the new content)", tr.chars, len([]rune("Hola, buenas")))
	}
	// The older job, delivered last.
	if err := svc.Process(ctx, rev1); err != nil {
		t.Fatal(err)
	}
	if v := w.listed(t, bearer(w.ben), id); v.Content != "Hola, buenas [en]" || !v.Translated || v.Revision != 2 {
		t.Fatalf("after the old job Ben reads %+v, want the revision 2 translation", v)
	}
	// A save of revision 2 racing an edit to revision 3: refused.
	if rec = w.do(t, "PATCH", "/api/v1/external/rooms/"+w.room+"/messages/"+id, `{"content":"Hola de nuevo"}`, es); rec.Code != 200 {
		t.Fatalf("edit: %d %s", rec.Code, rec.Body)
	}
	if err := storetest.New(w.app.DB, w.app.Table).Translation.SaveRevision(ctx, w.general, id, 2, []chat.Translation{{MessageID: id, Language: "en",
		Content: "stale", CreatedAt: time.Now()}}, true); err != nil {
		t.Fatal(err)
	}
	if v := w.listed(t, bearer(w.ben), id); v.Content != "Hola de nuevo" || v.Translated {
		t.Fatalf("after a stale save Ben reads %+v, want the revision 3 original", v)
	}
	if item := w.rawMessage(t, w.general, id); item["pending_shard"] == nil {
		t.Fatalf("revision 3 is not marked for the sweep: %v", item)
	}
	if err := svc.Process(ctx, job()); err != nil {
		t.Fatal(err)
	}
	if v := w.listed(t, bearer(w.ben), id); v.Content != "Hola de nuevo [en]" || v.Revision != 3 {
		t.Fatalf("Ben reads %+v, want the revision 3 translation", v)
	}
	// Deleted: a late job stores nothing (pkg/relay tests that the relay
	// removes the stored translations).
	if rec = w.do(t, "DELETE", "/api/v1/external/rooms/"+w.room+"/messages/"+id, "", es); rec.Code != 204 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	if err := storetest.New(w.app.DB, w.app.Table).Translation.DeleteTranslations(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := svc.Process(ctx, rev2); err != nil {
		t.Fatal(err)
	}
	if err := storetest.New(w.app.DB, w.app.Table).Translation.SaveRevision(ctx, w.general, id, 3, []chat.Translation{{MessageID: id, Language: "en",
		Content: "late", CreatedAt: time.Now()}}, true); err != nil {
		t.Fatal(err)
	}
	if n := w.count(t, "TR#"); n != 0 {
		t.Fatalf("translations after late saves of a deleted message: got %d, want 0", n)
	}
}

// Fifty concurrent edits of one message: no 5xx, every edit one revision,
// the last content stored; with If-Match, one edit wins per revision.
func TestConcurrentEdits(t *testing.T) {
	w := newMemberWorld(t)
	ben := bearer(w.ben)
	id := w.post(t, ben, "draft v0")
	path := w.msgPath(w.general, id)
	var wg sync.WaitGroup
	codes := make([]int, 50)
	for i := range codes {
		wg.Go(func() {
			codes[i] = w.serveCode(t, "PATCH", path, fmt.Sprintf(`{"content":"draft v%d"}`, i+1), ben)
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Fatalf("edit %d: got %d, want 200", i, c)
		}
	}
	v := w.listed(t, ben, id)
	if v.Revision != 51 {
		t.Fatalf("revision after 50 edits: got %d, want 51", v.Revision)
	}
	// The 51 revisions' jobs, all at once, in no order: Ana (es-ES) ends
	// up reading the translation of the last content, never an earlier one.
	page, err := storetest.New(w.app.DB, w.app.Table).Rooms.ListMessages(context.Background(), w.general, "", 1)
	if err != nil || len(page.Items) != 1 {
		t.Fatal(err)
	}
	svc := &translation.Service{Store: storetest.New(w.app.DB, w.app.Table).Translation, Translator: &fixedTranslator{}}
	for rev := 51; rev >= 1; rev-- {
		job := messages.JobOf(page.Items[0])
		job.Revision = rev
		wg.Go(func() {
			if err := svc.Process(context.Background(), job); err != nil {
				t.Errorf("job of revision %d: %v", rev, err)
			}
		})
	}
	wg.Wait()
	if a := w.listed(t, bearer(w.ana), id); a.Content != v.OriginalContent+" [es]" || !a.Translated {
		t.Fatalf("Ana reads %q (translated %v), want the translation of %q", a.Content, a.Translated, v.OriginalContent)
	}
	won := make([]int, 0)
	for i := range codes {
		wg.Go(func() {
			codes[i] = w.serveCode(t, "PATCH", path, fmt.Sprintf(`{"content":"w%d"}`, i), with(ben, "If-Match", "51"))
		})
	}
	wg.Wait()
	for i, c := range codes {
		switch c {
		case 200:
			won = append(won, i)
		case 412:
		default:
			t.Fatalf("If-Match edit %d: got %d, want 200 or 412", i, c)
		}
	}
	if len(won) != 1 {
		t.Fatalf("If-Match edits that won: got %d, want 1", len(won))
	}
	if v := w.listed(t, ben, id); v.Revision != 52 || v.OriginalContent != fmt.Sprintf("w%d", won[0]) {
		t.Fatalf("after the If-Match race: %+v, want revision 52 with the winner's content", v)
	}
}

// serveCode sends a request without the OpenAPI check (safe from
// goroutines) and returns its status.
func (w *memberWorld) serveCode(t *testing.T, method, path, body string, hdr map[string]string) int {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	return rec.Code
}

// Content at the limits: 40,000 characters of each class the posting
// tests use. Over HTTP only what fits 64 KiB can be sent (ASCII, '<'
// unescaped); the others go through the edit service on the same store.
func TestEditContentAtTheLimits(t *testing.T) {
	racetest.Payload(t)
	w := newMemberWorld(t)
	ben := bearer(w.ben)
	for _, char := range []string{"a", "<"} {
		id := w.post(t, ben, "short")
		content := strings.Repeat(char, messages.MaxContentLen)
		rec := w.do(t, "PATCH", w.msgPath(w.general, id), `{"content":"`+content+`"}`, ben)
		if rec.Code != 200 {
			t.Fatalf("%q: edit to 40,000: got %d %.300s, want 200", char, rec.Code, rec.Body)
		}
		if v := w.listed(t, ben, id); v.OriginalContent != content || v.Revision != 2 {
			t.Fatalf("%q: listed %d bytes at revision %d, want the 40,000 characters at revision 2", char, len(v.OriginalContent), v.Revision)
		}
	}
	svc := &edits.Service{Store: storetest.New(w.app.DB, w.app.Table).Edits, IDs: chat.NewIDs(), Now: time.Now}
	actor := edits.Actor{Type: chat.AuthorUser, ID: w.ben.ID, Name: w.ben.Name, WorkspaceID: w.ws.ID}
	for _, char := range []string{"\u2028", "\U0001F600", "\uffff", "é"} {
		id := w.post(t, ben, "short")
		content := "x" + strings.Repeat(char, messages.MaxContentLen-1)
		v, err := svc.Edit(context.Background(), actor, w.general, id, edits.Body{Content: content, HasContent: true}, "1")
		if err != nil || v.Message.Rev() != 2 {
			t.Fatalf("%+q: edit to 40,000: %v (revision %d)", char, err, v.Message.Rev())
		}
		if _, err := svc.Edit(context.Background(), actor, w.general, id, edits.Body{Content: content + char, HasContent: true}, ""); !chat.IsCode(err, chat.EValidation) {
			t.Fatalf("%+q: 40,001 characters: got %v, want a validation error", char, err)
		}
		page, err := storetest.New(w.app.DB, w.app.Table).Rooms.ListMessages(context.Background(), w.general, "", 1)
		if err != nil || len(page.Items) != 1 || page.Items[0].ID != id || page.Items[0].Content != content {
			t.Fatalf("%+q: stored content differs (%v)", char, err)
		}
	}
}

// TestEditsMeetingTranslationSaves: edits and a deletion made while the
// translation function saves the message's translations (one
// TransactWriteItems each, which DynamoDB — and the strict local AWS —
// lets no single-item write touch while it runs) are all carried out: the
// store retries the TransactionConflictException the SDK does not. Before,
// most of 20 such edits answered 503.
func TestEditsMeetingTranslationSaves(t *testing.T) {
	w := newMemberWorld(t)
	ben := bearer(w.ben)
	ctx := context.Background()
	id := w.post(t, ben, "draft v0")
	store := storetest.New(w.app.DB, w.app.Table).Translation
	stop := make(chan struct{})
	var saver sync.WaitGroup
	saves := 0
	saver.Go(func() {
		// Ten saves, as the jobs of the first revisions and their
		// redeliveries make, overlapping the edits; those after the first
		// edit are refused by their revision condition, and still hold the
		// item while they run, as in DynamoDB.
		for range 10 {
			select {
			case <-stop:
				return
			default:
			}
			_ = store.SaveRevision(ctx, w.general, id, 1, []chat.Translation{{MessageID: id, Language: "es", Content: "borrador", SourceLanguage: "en", CreatedAt: time.Now()}}, false)
			saves++
		}
	})
	var wg sync.WaitGroup
	codes := make([]int, 20)
	for i := range codes {
		wg.Go(func() {
			codes[i] = w.serveCode(t, "PATCH", w.msgPath(w.general, id), fmt.Sprintf(`{"content":"draft v%d"}`, i+1), ben)
		})
	}
	wg.Wait()
	del := w.serveCode(t, "DELETE", w.msgPath(w.general, id), "", ben)
	close(stop)
	saver.Wait()
	refused := 0
	for _, c := range codes {
		if c != 200 {
			refused++
		}
	}
	if refused > 0 || del != 204 {
		t.Fatalf("%d of 20 edits refused (codes %v), deletion %d, with %d saves running; want every edit 200 and the deletion 204", refused, codes, del, saves)
	}
	t.Logf("20 edits and a deletion, all carried out, while %d translation saves ran", saves)
}

// TestAdminDeletionAndItsAuditAreOneWrite: an admin's deletion of another
// user's message and its audit event are written together or not at all.
// A write that fails (here as AWS answers a call it refuses) leaves the
// message as it was and no event; the retry deletes it with its event.
// Before, the deletion was written and then the audit event failed: a
// deletion without its audit entry.
func TestAdminDeletionAndItsAuditAreOneWrite(t *testing.T) {
	w := newMemberWorld(t)
	id := w.post(t, bearer(w.ben), "Ben's message")
	refused := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized (injected)"}
	for _, op := range []string{"DynamoDB.PutItem", "DynamoDB.TransactWriteItems"} {
		w.st.Faults.FailWith(op, 0, 1, refused)
	}
	rec := w.do(t, "DELETE", w.msgPath(w.general, id), "", bearer(w.ana))
	w.st.Faults.Clear()
	deleted := w.listed(t, bearer(w.ben), id).Deleted
	if events := w.count(t, "EVT#"); rec.Code < 500 || deleted || events != 0 {
		t.Fatalf("a failed admin deletion: %d, deleted %v, %d audit events; want a 5xx with nothing written", rec.Code, deleted, events)
	}
	if rec := w.do(t, "DELETE", w.msgPath(w.general, id), "", bearer(w.ana)); rec.Code != 204 {
		t.Fatalf("retry: %d %s", rec.Code, rec.Body)
	}
	if deleted, events := w.listed(t, bearer(w.ben), id).Deleted, w.count(t, "EVT#"); !deleted || events != 1 {
		t.Fatalf("after the retry: deleted %v, %d audit events; want deleted with one event", deleted, events)
	}
}

// TestEditAttachmentsListsAndUnknownUploads: through the member's edit
// function, an edit whose attachments list is the message's own (none)
// changes nothing; one that attaches an upload that does not exist is 422
// and changes nothing; a body with neither field is 422. (Without a
// bucket, attaching is 503: pkg/attachments's tests.)
func TestEditAttachmentsListsAndUnknownUploads(t *testing.T) {
	w := newMemberWorld(t)
	ben := bearer(w.ben)
	id := w.post(t, ben, "plain")
	path := w.msgPath(w.general, id)
	if rec := w.do(t, "PATCH", path, `{"attachments":[]}`, ben); rec.Code != 200 || decodeAs[struct{ Data editBody }](t, rec.Body.Bytes()).Data.Revision != 1 {
		t.Fatalf("the same (empty) list: %d %s, want 200 at revision 1", rec.Code, rec.Body)
	}
	upload := chat.NewIDs().New(time.Now())
	if rec := w.do(t, "PATCH", path, `{"content":"with a file","attachments":[{"upload_id":"`+upload+`"}]}`, ben); rec.Code != 422 {
		t.Fatalf("attaching an unknown upload: %d %s, want 422", rec.Code, rec.Body)
	}
	if rec := w.do(t, "PATCH", path, `{}`, ben); rec.Code != 422 {
		t.Fatalf("neither content nor attachments: %d %s, want 422", rec.Code, rec.Body)
	}
	if v := w.listed(t, ben, id); v.Revision != 1 || v.OriginalContent != "plain" {
		t.Fatalf("listed %q at revision %d, want the message unchanged", v.OriginalContent, v.Revision)
	}
}
