package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/httpapi"
)

// memberWorld is newWorld's Acme with members: Ana (es-ES, admin) reads
// general and random, Ben (en, member) only general; general has a room.
type memberWorld struct {
	*world
	ana, ben           fixture.User
	general, random    string
	room, otherChannel string
}

func newMemberWorld(t *testing.T) *memberWorld {
	t.Helper()
	w := newWorld(t, 600)
	ws := &w.doc.Workspaces[0]
	ws.Users[0].Role = chat.RoleAdmin
	ws.Users = append(ws.Users, fixture.User{Name: "Ben", PreferredLanguage: "en"})
	if err := w.doc.Complete(chat.NewIDs(), time.Now()); err != nil {
		t.Fatal(err)
	}
	ana, ben := ws.Users[0], ws.Users[1]
	ws.Channels[0].Members = []string{ana.ID, ben.ID}
	ws.Channels[1].Members = []string{ana.ID}
	ws.TemporaryRooms = []fixture.Room{{ChannelID: ws.Channels[0].ID, Name: "Support call", ExpiresAt: chat.FormatTime(time.Now().Add(2 * time.Hour))}}
	if err := w.doc.Complete(chat.NewIDs(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := storetest.New(w.app.DB, w.app.Table).Fixture.Apply(context.Background(), w.doc, time.Now()); err != nil {
		t.Fatalf("apply: %v", err)
	}
	w.ws = *ws
	w.st.Calls.Reset()
	return &memberWorld{world: w, ana: ana, ben: ben, general: ws.Channels[0].ID, random: ws.Channels[1].ID,
		room: ws.TemporaryRooms[0].RoomID, otherChannel: w.other.Channels[0].ID}
}

func bearer(u fixture.User) map[string]string {
	return map[string]string{"Authorization": "Bearer " + u.APIToken}
}

func (w *memberWorld) wsPath(rest string) string { return "/api/v1/workspaces/" + w.ws.ID + rest }

// calls runs f and returns the AWS calls it made, logged under what.
func (w *memberWorld) calls(t *testing.T, what string, f func()) []string {
	t.Helper()
	w.st.Calls.Reset()
	f()
	calls := w.st.Calls.Calls()
	t.Logf("%s: %d AWS calls %v", what, len(calls), calls)
	return calls
}

type pageOf[T any] struct {
	Data []T `json:"data"`
	Meta struct {
		NextCursor *string `json:"next_cursor"`
		Limit      int     `json:"limit"`
	} `json:"meta"`
}

type viewBody struct {
	ID     string `json:"id"`
	Author struct {
		Type      string  `json:"type"`
		ID        *string `json:"id"`
		Name      string  `json:"name"`
		AvatarURL *string `json:"avatar_url"`
	} `json:"author"`
	Content         string `json:"content"`
	Language        string `json:"language"`
	OriginalContent string `json:"original_content"`
	Translated      bool   `json:"translated"`
}

type roomBody struct {
	RoomID    string `json:"room_id"`
	ChannelID string `json:"channel_id"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	ExpiresAt string `json:"expires_at"`
	JoinPath  string `json:"join_path"`
}

func decodeAs[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	return v
}

func TestMemberChannels(t *testing.T) {
	w := newMemberWorld(t)
	var rec1 []string
	var page pageOf[struct{ ID, Name string }]
	rec1 = w.calls(t, "channels page", func() {
		rec := w.do(t, "GET", w.wsPath("/channels?limit=1"), "", bearer(w.ana))
		if rec.Code != 200 {
			t.Fatalf("channels: %d %s", rec.Code, rec.Body)
		}
		page = decodeAs[pageOf[struct{ ID, Name string }]](t, rec.Body.Bytes())
	})
	if len(rec1) > 2 {
		t.Errorf("channels page: %d AWS calls %v, want at most 2", len(rec1), rec1)
	}
	if len(page.Data) != 1 || page.Data[0].ID != w.general || page.Meta.NextCursor == nil {
		t.Fatalf("first page %+v, want general and a cursor", page)
	}
	rec := w.do(t, "GET", w.wsPath("/channels?limit=1&cursor="+*page.Meta.NextCursor), "", bearer(w.ana))
	page = decodeAs[pageOf[struct{ ID, Name string }]](t, rec.Body.Bytes())
	if len(page.Data) != 1 || page.Data[0].ID != w.random || page.Meta.NextCursor != nil {
		t.Fatalf("second page %s, want random and no cursor", rec.Body)
	}
	// Ben's list holds only his channel; Ana's cursor is not his.
	rec = w.do(t, "GET", w.wsPath("/channels"), "", bearer(w.ben))
	if page = decodeAs[pageOf[struct{ ID, Name string }]](t, rec.Body.Bytes()); len(page.Data) != 1 || page.Data[0].ID != w.general {
		t.Fatalf("Ben's channels %s, want general only", rec.Body)
	}
	first := w.do(t, "GET", w.wsPath("/channels?limit=1"), "", bearer(w.ana))
	cur := *decodeAs[pageOf[struct{ ID string }]](t, first.Body.Bytes()).Meta.NextCursor
	if rec := w.do(t, "GET", w.wsPath("/channels?cursor="+cur), "", bearer(w.ben)); rec.Code != 422 {
		t.Fatalf("Ana's cursor used by Ben: %d %s, want 422", rec.Code, rec.Body)
	}
	// Re-applying without Ben in random keeps Ben out; removing Ana from
	// random removes it from her list and from her token's channels.
	w.doc.Workspaces[0].Channels[1].Members = []string{}
	if err := storetest.New(w.app.DB, w.app.Table).Fixture.Apply(context.Background(), w.doc, time.Now()); err != nil {
		t.Fatal(err)
	}
	rec = w.do(t, "GET", w.wsPath("/channels"), "", bearer(w.ana))
	if page = decodeAs[pageOf[struct{ ID, Name string }]](t, rec.Body.Bytes()); len(page.Data) != 1 || page.Data[0].ID != w.general {
		t.Fatalf("Ana's channels after leaving random %s, want general only", rec.Body)
	}
	if rec := w.do(t, "GET", w.wsPath("/channels/"+w.random+"/messages"), "", bearer(w.ana)); rec.Code != 403 {
		t.Fatalf("messages of a channel Ana left: %d, want 403", rec.Code)
	}
}

// TestMemberReadsGuestMessageTranslated: a guest posts in Spanish, the
// translation function stores its English translation, and Ben (en) reads
// exactly the view an English-speaking guest reads; Ana (es-ES) reads the
// original.
func TestMemberReadsGuestMessageTranslated(t *testing.T) {
	w := newMemberWorld(t)
	ctx := context.Background()
	join := func(lang string) string {
		rec := w.do(t, "POST", "/api/v1/external/rooms/"+w.room+"/guests", `{"nickname":"G","preferred_language":"`+lang+`"}`, nil)
		var j struct {
			Data struct {
				Session struct{ Token string } `json:"session"`
			} `json:"data"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &j); err != nil || rec.Code != 201 {
			t.Fatalf("join: %d %s", rec.Code, rec.Body)
		}
		return j.Data.Session.Token
	}
	esGuest, enGuest := join("es-ES"), join("en")
	guestHdr := func(tok string) map[string]string { return map[string]string{"X-Service-Guest-Token": tok} }
	rec := w.do(t, "POST", "/api/v1/external/rooms/"+w.room+"/messages", `{"content":"Hola, necesito ayuda"}`, guestHdr(esGuest))
	posted := decodeAs[struct{ Data viewBody }](t, rec.Body.Bytes()).Data
	if err := storetest.New(w.app.DB, w.app.Table).Translation.SaveTranslations(ctx, w.general, posted.ID, []chat.Translation{{MessageID: posted.ID, Language: "en",
		Content: "Hello, I need help", SourceLanguage: "es", CreatedAt: time.Now()}}, true); err != nil {
		t.Fatal(err)
	}
	var member []string
	var benView pageOf[viewBody]
	member = w.calls(t, "messages page with a translation", func() {
		rec = w.do(t, "GET", w.wsPath("/channels/"+w.general+"/messages"), "", bearer(w.ben))
		benView = decodeAs[pageOf[viewBody]](t, rec.Body.Bytes())
	})
	if len(member) > 3 {
		t.Errorf("messages page: %d AWS calls %v, want at most 3", len(member), member)
	}
	guestRec := w.do(t, "GET", "/api/v1/external/rooms/"+w.room+"/messages", "", guestHdr(enGuest))
	guestView := decodeAs[pageOf[viewBody]](t, guestRec.Body.Bytes())
	if len(benView.Data) != 1 || benView.Data[0].Content != "Hello, I need help" || !benView.Data[0].Translated {
		t.Fatalf("Ben's view %s, want the English translation", rec.Body)
	}
	if b, g := string(mustMarshal(t, benView.Data)), string(mustMarshal(t, guestView.Data)); b != g {
		t.Fatalf("member view %s differs from the guest's %s", b, g)
	}
	rec = w.do(t, "GET", w.wsPath("/channels/"+w.general+"/messages"), "", bearer(w.ana))
	if v := decodeAs[pageOf[viewBody]](t, rec.Body.Bytes()); v.Data[0].Content != "Hola, necesito ayuda" || v.Data[0].Translated {
		t.Fatalf("Ana's view %s, want the original", rec.Body)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMemberPost(t *testing.T) {
	w := newMemberWorld(t)
	path := w.wsPath("/channels/" + w.general + "/messages")
	withKey := func(u fixture.User, key string) map[string]string {
		h := bearer(u)
		h["Idempotency-Key"] = key
		return h
	}
	for _, tc := range []struct {
		name string
		hdr  map[string]string
	}{{"without a key", bearer(w.ben)}, {"with a key", withKey(w.ben, "k-1")}} {
		var rec *httpRecorder
		calls := w.calls(t, "post "+tc.name, func() {
			rec = record(w.do(t, "POST", path, `{"content":"Hi <there> \u2028 😀","skip_translation":true}`, tc.hdr))
		})
		if len(calls) > 2 {
			t.Errorf("%s: %d AWS calls %v, want at most 2", tc.name, len(calls), calls)
		}
		if rec.code != 201 {
			t.Fatalf("%s: %d %s", tc.name, rec.code, rec.body)
		}
		v := decodeAs[struct{ Data viewBody }](t, []byte(rec.body)).Data
		if v.Author.Type != "user" || v.Author.ID == nil || *v.Author.ID != w.ben.ID || v.Author.Name != "Ben" || v.Author.AvatarURL != nil ||
			v.Content != "Hi <there> \u2028 😀" || v.Language != "en" {
			t.Fatalf("%s: view %s", tc.name, rec.body)
		}
	}
	first := w.count(t, "MSG#")
	// The replay: same status and body, the header, nothing posted, still two calls.
	var again *httpRecorder
	calls := w.calls(t, "post replay", func() {
		again = record(w.do(t, "POST", path, `{"content":"Hi <there> \u2028 😀","skip_translation":true}`, withKey(w.ben, "k-1")))
	})
	if again.code != 201 || again.hdr.Get("Idempotent-Replayed") != "true" || len(calls) > 2 || w.count(t, "MSG#") != first {
		t.Fatalf("replay: %d %v %s after %v calls, messages %d -> %d", again.code, again.hdr, again.body, calls, first, w.count(t, "MSG#"))
	}
	for _, tc := range []struct {
		name, path, body string
		hdr              map[string]string
		status           int
		code             string
	}{
		{"other content", path, `{"content":"Hi","skip_translation":true}`, withKey(w.ben, "k-1"), 422, "idempotency_key_reused"},
		{"other skip", path, `{"content":"Hi <there> \u2028 😀"}`, withKey(w.ben, "k-1"), 422, "idempotency_key_reused"},
		{"other channel", w.wsPath("/channels/" + w.random + "/messages"), `{"content":"Hi <there> \u2028 😀","skip_translation":true}`, withKey(w.ana, "k-1"), 201, ""},
		{"key with control", path, `{"content":"x"}`, withKey(w.ben, "k\x01"), 400, "invalid_idempotency_key"},
		{"key too long", path, `{"content":"x"}`, withKey(w.ben, strings.Repeat("k", 256)), 400, "invalid_idempotency_key"},
		{"40,001 characters", path, `{"content":"` + strings.Repeat("a", 40001) + `"}`, bearer(w.ben), 422, ""},
		{"40,000 characters of <", path, `{"content":"` + strings.Repeat("<", 40000) + `"}`, bearer(w.ben), 201, ""},
		{"not a member", w.wsPath("/channels/" + w.random + "/messages"), `{"content":"x"}`, bearer(w.ben), 403, "forbidden"},
	} {
		rec := w.do(t, "POST", tc.path, tc.body, tc.hdr)
		if rec.Code != tc.status || tc.code != "" && !strings.Contains(rec.Body.String(), `"`+tc.code+`"`) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, rec.Code, rec.Body, tc.status, tc.code)
		}
	}
	// The same key of another user is another key (Ana's own k-1 above was 201).
	// Concurrent requests with one key make one message.
	before := w.count(t, "MSG#")
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	bodies := make([]string, 8)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := w.do(t, "POST", path, `{"content":"once"}`, withKey(w.ben, "race"))
			statuses[i], bodies[i] = rec.Code, rec.Body.String()
		}()
	}
	wg.Wait()
	if got := w.count(t, "MSG#") - before; got != 1 {
		t.Fatalf("concurrent posts with one key stored %d messages, want 1 (statuses %v)", got, statuses)
	}
	var id string
	for i, s := range statuses {
		switch s {
		case 201:
			v := decodeAs[struct{ Data viewBody }](t, []byte(bodies[i])).Data
			if id != "" && v.ID != id {
				t.Fatalf("concurrent posts answered two message ids %s and %s", id, v.ID)
			}
			id = v.ID
		case 409:
		default:
			t.Fatalf("concurrent post %d: %d %s, want 201 or 409", i, s, bodies[i])
		}
	}
	// A member's message reaches the translation function like any other:
	// the outbox relay accepts its stream image.
	if w.count(t, "MSG#") == 0 {
		t.Fatal("no message item")
	}
}

// TestMemberMessageIsAnOutboxEvent holds that the stream image of a member's
// message is a message to the relay, so it is translated for every reader.
func TestMemberMessageIsAnOutboxEvent(t *testing.T) {
	w := newMemberWorld(t)
	rec := w.do(t, "POST", w.wsPath("/channels/"+w.general+"/messages"), `{"content":"Hello"}`, bearer(w.ben))
	id := decodeAs[struct{ Data viewBody }](t, rec.Body.Bytes()).Data.ID
	snap := w.snapshot(t)
	it, ok := snap["CHAN#"+w.general+" MSG#"+id]
	if !ok {
		t.Fatalf("no message item for %s", id)
	}
	if it.attrs["source_language"] != "en" || !strings.Contains(it.attrs["author"], "type:user") {
		t.Fatalf("message item %v, want source en by a user", it)
	}
	page, err := storetest.New(w.app.DB, w.app.Table).Rooms.ListMessages(context.Background(), w.general, "", 10)
	if err != nil || len(page.Items) != 1 || page.Items[0].Author.Type != chat.AuthorUser {
		t.Fatalf("stored message %+v %v", page, err)
	}
}

func TestRoomsLifecycle(t *testing.T) {
	w := newMemberWorld(t)
	ctx := context.Background()
	exp := chat.FormatTime(time.Now().Add(3 * time.Hour))
	var rec *httpRecorder
	calls := w.calls(t, "create room", func() {
		rec = record(w.do(t, "POST", w.wsPath("/rooms"), `{"channel_id":"`+w.general+`","name":"  Order help 😀 ","expires_at":"`+exp+`"}`, bearer(w.ben)))
	})
	if rec.code != 201 || len(calls) > 2 {
		t.Fatalf("create: %d %s after %d calls %v, want 201 in at most 2", rec.code, rec.body, len(calls), calls)
	}
	room := decodeAs[struct{ Data roomBody }](t, []byte(rec.body)).Data
	if room.Name != "Order help 😀" || room.Status != "active" || room.ExpiresAt != exp || room.JoinPath != "/api/v1/external/rooms/"+room.RoomID+"/guests" {
		t.Fatalf("room %+v", room)
	}
	// Newest first: the new room, then the fixture's.
	list := w.do(t, "GET", w.wsPath("/rooms"), "", bearer(w.ben))
	rooms := decodeAs[pageOf[roomBody]](t, list.Body.Bytes())
	if len(rooms.Data) != 2 || rooms.Data[0].RoomID != room.RoomID || rooms.Data[1].RoomID != w.room {
		t.Fatalf("rooms %s, want the new room then the fixture's", list.Body)
	}
	// Guests join; readers include them until the room closes.
	var tokens []string
	for i := 0; i < 20; i++ {
		jr := w.do(t, "POST", room.JoinPath, fmt.Sprintf(`{"nickname":"G%d","preferred_language":"fr"}`, i), nil)
		if jr.Code != 201 {
			t.Fatalf("join %d: %d %s", i, jr.Code, jr.Body)
		}
		var j struct {
			Data struct {
				Session struct{ Token string } `json:"session"`
			} `json:"data"`
		}
		_ = json.Unmarshal(jr.Body.Bytes(), &j)
		tokens = append(tokens, j.Data.Session.Token)
	}
	readers, err := storetest.New(w.app.DB, w.app.Table).Translation.Readers(ctx, w.general, time.Now())
	if err != nil || len(readers) != 22 {
		t.Fatalf("readers before close: %d %v, want 2 users and 20 guests", len(readers), err)
	}
	closePath := w.wsPath("/rooms/" + room.RoomID + "/close")
	for i := 0; i < 2; i++ {
		calls = w.calls(t, fmt.Sprintf("close %d with 20 guests", i+1), func() { rec = record(w.do(t, "POST", closePath, "", bearer(w.ben))) })
		if rec.code != 200 || decodeAs[struct{ Data roomBody }](t, []byte(rec.body)).Data.Status != "closed" || len(calls) > 3 {
			t.Fatalf("close %d with 20 guests: %d %s after %d calls %v, want 200 closed in at most 3", i+1, rec.code, rec.body, len(calls), calls)
		}
	}
	if jr := w.do(t, "POST", room.JoinPath, `{"nickname":"Late","preferred_language":"fr"}`, nil); jr.Code != 410 {
		t.Fatalf("join after close: %d, want 410", jr.Code)
	}
	for _, tok := range []string{tokens[0], tokens[19]} {
		hdr := map[string]string{"X-Service-Guest-Token": tok}
		if g := w.do(t, "GET", "/api/v1/external/rooms/"+room.RoomID+"/messages", "", hdr); g.Code != 410 {
			t.Fatalf("guest list after close: %d, want 410", g.Code)
		}
		if g := w.do(t, "POST", "/api/v1/external/rooms/"+room.RoomID+"/messages", `{"content":"hi"}`, hdr); g.Code != 410 {
			t.Fatalf("guest post after close: %d, want 410", g.Code)
		}
	}
	if readers, err = storetest.New(w.app.DB, w.app.Table).Translation.Readers(ctx, w.general, time.Now()); err != nil || len(readers) != 2 {
		t.Fatalf("readers after close: %v %v, want the 2 users only", readers, err)
	}
	list = w.do(t, "GET", w.wsPath("/rooms?limit=1"), "", bearer(w.ana))
	if rooms = decodeAs[pageOf[roomBody]](t, list.Body.Bytes()); rooms.Data[0].Status != "closed" || rooms.Meta.NextCursor == nil {
		t.Fatalf("listed after close %s, want closed and a cursor", list.Body)
	}
	// A room with no guest closes within the budget too.
	exp2 := chat.FormatTime(time.Now().Add(time.Hour))
	rec = record(w.do(t, "POST", w.wsPath("/rooms"), `{"channel_id":"`+w.random+`","name":"Empty","expires_at":"`+exp2+`"}`, bearer(w.ana)))
	empty := decodeAs[struct{ Data roomBody }](t, []byte(rec.body)).Data
	calls = w.calls(t, "close without guests", func() { rec = record(w.do(t, "POST", w.wsPath("/rooms/"+empty.RoomID+"/close"), "", bearer(w.ana))) })
	if rec.code != 200 || len(calls) > 3 {
		t.Fatalf("close without guests: %d after %v, want 200 in at most 3 calls", rec.code, calls)
	}
	// Ben is not a member of random nor an admin: 403; Ana, an admin, closes
	// the fixture room of general (she is a member too).
	if r := w.do(t, "POST", w.wsPath("/rooms/"+empty.RoomID+"/close"), "", bearer(w.ben)); r.Code != 403 {
		t.Fatalf("close by a non-member: %d, want 403", r.Code)
	}
	// Expired rooms are listed as expired.
	w.app.Now = func() time.Time { return time.Now().Add(5 * time.Hour) }
	handlers, _ := handlers.All(w.app)
	w.h = httpapi.Mux(handlers)
	list = w.do(t, "GET", w.wsPath("/rooms"), "", bearer(w.ana))
	statuses := map[string]string{}
	for _, r := range decodeAs[pageOf[roomBody]](t, list.Body.Bytes()).Data {
		statuses[r.RoomID] = r.Status
	}
	if statuses[w.room] != "expired" || statuses[room.RoomID] != "closed" {
		t.Fatalf("statuses 5 hours later %v, want the fixture room expired and the closed one closed", statuses)
	}
}

func TestCreateRoomValidation(t *testing.T) {
	w := newMemberWorld(t)
	now := time.Now()
	at := func(d time.Duration) string { return chat.FormatTime(now.Add(d)) }
	body := func(channel, name, exp string) string {
		return fmt.Sprintf(`{"channel_id":%q,"name":%q,"expires_at":%q}`, channel, name, exp)
	}
	for _, tc := range []struct {
		name, body string
		status     int
		field      string
	}{
		{"100 characters", body(w.general, strings.Repeat("é", 100), at(time.Hour)), 201, ""},
		{"101 characters", body(w.general, strings.Repeat("é", 101), at(time.Hour)), 422, "name"},
		{"blank name", body(w.general, " \t ", at(time.Hour)), 422, "name"},
		{"control character", `{"channel_id":"` + w.general + `","name":"a\u0007b","expires_at":"` + at(time.Hour) + `"}`, 422, "name"},
		{"line separator", body(w.general, "a\u2028b", at(time.Hour)), 422, "name"},
		{"name of U+FFFF", body(w.general, "\uffff", at(time.Hour)), 201, ""},
		{"past", body(w.general, "x", at(-time.Minute)), 422, "expires_at"},
		{"7 days", body(w.general, "x", at(7*24*time.Hour-time.Minute)), 201, ""},
		{"7 days and a minute", body(w.general, "x", at(7*24*time.Hour+time.Minute)), 422, "expires_at"},
		{"not RFC 3339", body(w.general, "x", "tomorrow"), 422, "expires_at"},
		{"number expiry", `{"channel_id":"` + w.general + `","name":"x","expires_at":1795341600}`, 422, "expires_at"},
		{"missing channel", `{"name":"x","expires_at":"` + at(time.Hour) + `"}`, 422, "channel_id"},
		{"channel not the caller's", body(w.random, "x", at(time.Hour)), 403, ""},
		{"channel of another workspace", body(w.otherChannel, "x", at(time.Hour)), 403, ""},
		{"malformed channel", body("../../x", "x", at(time.Hour)), 403, ""},
	} {
		rec := w.do(t, "POST", w.wsPath("/rooms"), tc.body, bearer(w.ben))
		if rec.Code != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, rec.Code, rec.Body, tc.status)
			continue
		}
		if tc.field != "" && !strings.Contains(rec.Body.String(), `"`+tc.field+`":[`) {
			t.Errorf("%s: %s, want an error on %s", tc.name, rec.Body, tc.field)
		}
	}
}

// httpRecorder is a response copied out of a closure.
type httpRecorder struct {
	code int
	hdr  http.Header
	body string
}

func record(rec interface {
	Result() *http.Response
}) *httpRecorder {
	res := rec.Result()
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return &httpRecorder{code: res.StatusCode, hdr: res.Header, body: b.String()}
}

// TestConcurrentPostsInOneMillisecond: hundreds of members' posts from
// several goroutines, all in one millisecond (the clock stands still), on
// the strict local AWS, while a few of their writes commit and lose their
// answer (an HTTP 500 the SDK retries, as in AWS): every post answers 201
// with its own id, and every message is stored once.
func TestConcurrentPostsInOneMillisecond(t *testing.T) {
	w := newMemberWorld(t)
	now := time.Now().UTC()
	w.app.Now = func() time.Time { return now }
	hs, err := handlers.All(w.app)
	if err != nil {
		t.Fatal(err)
	}
	w.h = httpapi.Mux(hs)
	path := w.wsPath("/channels/" + w.general + "/messages")
	for _, skip := range []int{3, 40, 41, 150} {
		w.st.Faults.LoseAnswer("DynamoDB.PutItem", skip)
	}
	w.st.Faults.LoseAnswer("DynamoDB.TransactWriteItems", 7)
	const goroutines, each = 8, 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	ids := map[string]bool{}
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				hdr := bearer(w.ben)
				if i%4 == 0 {
					hdr["Idempotency-Key"] = fmt.Sprintf("k-%d-%d", g, i)
				}
				rec := w.do(t, "POST", path, fmt.Sprintf(`{"content":"post %d of %d"}`, i, g), hdr)
				if rec.Code != 201 || rec.Header().Get("Idempotent-Replayed") != "" {
					t.Errorf("post %d of %d: %d (replayed %q) %s, want a first 201", i, g, rec.Code, rec.Header().Get("Idempotent-Replayed"), rec.Body)
					continue
				}
				id := decodeAs[struct{ Data viewBody }](t, rec.Body.Bytes()).Data.ID
				mu.Lock()
				if ids[id] {
					t.Errorf("id %s answered twice", id)
				}
				ids[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(ids) != goroutines*each {
		t.Fatalf("%d distinct ids answered, want %d", len(ids), goroutines*each)
	}
	stored := 0
	for key := range w.snapshot(t) {
		if strings.HasPrefix(key, "CHAN#"+w.general+" MSG#") {
			if !ids[strings.TrimPrefix(key, "CHAN#"+w.general+" MSG#")] {
				t.Errorf("stored %s, answered to no post", key)
			}
			stored++
		}
	}
	if stored != goroutines*each {
		t.Fatalf("%d messages stored, want %d", stored, goroutines*each)
	}
}
