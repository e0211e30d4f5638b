package realtiming_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/handlers"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/internal/wiringtest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/app/realtiming"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/realtime"
	"github.com/chatbridge/chat/pkg/wsapi"
)

// Demo fixture ids (fixtures/demo.json).
const (
	demoWorkspace = "01JD9N0V80G9T6DXN5EAY6K8H4"
	demoSupport   = "01JD9N1048PXK951NGC7NEMZX9" // Ana and Ben
	demoRoom      = "01JD9N113GQYDPWDARF68MKWR7" // active, on support
	demoBen       = "01JD9N0X6GD9MV02DG9EVV9WM2"
)

// recorder is the Management API: what each connection was sent, and
// which were closed.
type recorder struct {
	mu     sync.Mutex
	posts  map[string][]string
	closed map[string]bool
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	id := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.Method == http.MethodDelete {
		r.closed[id] = true
		return
	}
	b, _ := io.ReadAll(req.Body)
	r.posts[id] = append(r.posts[id], string(b))
}

func (r *recorder) sent(id string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.posts[id]...)
}

// TestAccessEndsBeforeTheNextPush (issue 24 item 1): a revoked API token
// (apply gives a new one), a member dropped from the channel (apply), a
// guest token replaced by a re-join with the same client_id, and a closed
// room whose connection was stored after the close's own push (a
// subscribe that raced it) each lose their connection at the next push:
// the reader is told why, the connection is closed and its item deleted,
// and the message is not sent to it. A connection still entitled gets it.
func TestAccessEndsBeforeTheNextPush(t *testing.T) {
	st, d := wiringtest.DemoAs(t, realtiming.RealtimePushFunction)
	rec := &recorder{posts: map[string][]string{}, closed: map[string]bool{}}
	mgmt := httptest.NewServer(rec)
	defer mgmt.Close()
	a := app.New(st.AWS, st.Table)
	handlers, err := handlers.All(a)
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(httpapi.Mux(handlers))
	defer api.Close()
	push := realtiming.Push(a, wsapi.NewClientFromConfig(st.AWS, mgmt.URL+"/live"), "").Pusher
	ctx := context.Background()

	join := func(clientID string) (guestID, token string) {
		t.Helper()
		body := map[string]any{"nickname": "Zoë", "preferred_language": "en"}
		if clientID != "" {
			body["client_id"] = clientID
		}
		b, _ := json.Marshal(body)
		resp, err := http.Post(api.URL+"/api/v1/external/rooms/"+demoRoom+"/guests", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var joined struct {
			Data struct {
				Guest   struct{ ID string }
				Session struct{ Token string }
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&joined); err != nil || joined.Data.Session.Token == "" {
			t.Fatalf("join: %d %v", resp.StatusCode, err)
		}
		return joined.Data.Guest.ID, joined.Data.Session.Token
	}
	subscribe := func(c realtime.Connection) {
		t.Helper()
		c.ChannelID, c.WorkspaceID, c.Language, c.ExpiresAt = demoSupport, demoWorkspace, "en", time.Now().Add(time.Hour)
		if err := storetest.New(a.DB, a.Table).Conns.PutConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	seat := func(token string) string { return chat.SeatToken(chat.HashToken(token)) }
	reapply := func(change func(w *fixture.Workspace)) {
		t.Helper()
		change(&d.Workspaces[0])
		if err := storetest.New(a.DB, a.Table).Fixture.Apply(ctx, d, time.Now()); err != nil {
			t.Fatalf("apply: %v", err)
		}
	}
	var n int
	pushMessage := func() string {
		t.Helper()
		n++
		m := chat.Message{ID: chat.NewIDs().New(time.Now()), WorkspaceID: demoWorkspace, ChannelID: demoSupport, Content: "hello " + string(rune('0'+n)),
			SourceLanguage: "en", CreatedAt: time.Now(), Author: chat.Author{Type: chat.AuthorBot, ID: "bot", Name: "Bot"}}
		if _, err := push.PushAll(ctx, []realtime.Change{{Kind: realtime.MessageStored, Message: m}}); err != nil {
			t.Fatalf("push: %v", err)
		}
		return m.ID
	}
	// ended asserts that the last push sent conn only code, then closed it.
	ended := func(conn, code string, before int) {
		t.Helper()
		got := rec.sent(conn)[before:]
		if len(got) != 1 || !strings.Contains(got[0], code) || !rec.closed[conn] {
			t.Fatalf("%s: got %q (closed %v), want only %s, then closed", conn, got, rec.closed[conn], code)
		}
		conns, _ := storetest.New(a.DB, a.Table).Conns.Connections(ctx, demoSupport, time.Now())
		for _, c := range conns {
			if c.ID == conn {
				t.Fatalf("%s: its item stayed", conn)
			}
		}
	}
	received := func(conn, id string) {
		t.Helper()
		got := rec.sent(conn)
		if len(got) == 0 || !strings.Contains(got[len(got)-1], id) || rec.closed[conn] {
			t.Fatalf("%s: got %q, want message %s last and the connection open", conn, got, id)
		}
	}

	// Ana stays entitled throughout; she receives every message.
	ana := d.Workspaces[0].Users[0]
	subscribe(realtime.Connection{ID: "ana", Kind: realtime.KindMember, SubjectID: ana.ID, Token: seat(ana.APIToken)})

	{ // revoked API token
		var old string
		for _, u := range d.Workspaces[0].Users {
			if u.ID == demoBen {
				old = u.APIToken
			}
		}
		subscribe(realtime.Connection{ID: "ben-old-token", Kind: realtime.KindMember, SubjectID: demoBen, Token: seat(old)})
		reapply(func(w *fixture.Workspace) {
			for i := range w.Users {
				if w.Users[i].ID == demoBen {
					w.Users[i].APIToken = "wsk_demo_ben_token_rotated"
				}
			}
		})
		subscribe(realtime.Connection{ID: "ben-new-token", Kind: realtime.KindMember, SubjectID: demoBen, Token: seat("wsk_demo_ben_token_rotated")})
		id := pushMessage()
		ended("ben-old-token", `"code":"unauthenticated"`, 0)
		received("ben-new-token", id)
		received("ana", id)
	}
	{ // member removed from the channel
		reapply(func(w *fixture.Workspace) {
			for i := range w.Channels {
				if w.Channels[i].ID == demoSupport {
					w.Channels[i].Members = []string{ana.ID}
				}
			}
		})
		before := len(rec.sent("ben-new-token"))
		id := pushMessage()
		ended("ben-new-token", `"code":"forbidden"`, before)
		received("ana", id)
	}
	{ // guest token replaced by a re-join
		const client = "3f1c1f0e-8d7a-4c1b-9a53-0b9d3f0c2a11"
		guest, first := join(client)
		subscribe(realtime.Connection{ID: "guest-first", Kind: realtime.KindGuest, SubjectID: guest, RoomID: demoRoom, Token: seat(first)})
		again, second := join(client)
		if again != guest {
			t.Fatalf("re-join gave guest %s, want %s", again, guest)
		}
		subscribe(realtime.Connection{ID: "guest-second", Kind: realtime.KindGuest, SubjectID: guest, RoomID: demoRoom, Token: seat(second)})
		id := pushMessage()
		ended("guest-first", `"code":"unauthenticated"`, 0)
		received("guest-second", id)
	}
	{ // closed room, connection stored after the close's push
		guest, token := join("")
		req, _ := http.NewRequest("POST", api.URL+"/api/v1/workspaces/"+demoWorkspace+"/rooms/"+demoRoom+"/close", nil)
		req.Header.Set("Authorization", "Bearer "+ana.APIToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("close: %v %v", resp, err)
		}
		resp.Body.Close()
		// The close's own push (its stream record) runs before this guest's
		// connection item lands, as when a subscribe that authenticated
		// just before the close races it.
		if _, err := push.PushAll(ctx, []realtime.Change{{Kind: realtime.RoomClosed, ChannelID: demoSupport, RoomID: demoRoom}}); err != nil {
			t.Fatal(err)
		}
		subscribe(realtime.Connection{ID: "guest-racing", Kind: realtime.KindGuest, SubjectID: guest, RoomID: demoRoom, Token: seat(token)})
		id := pushMessage()
		ended("guest-racing", `"type":"room.closed"`, 0)
		received("ana", id)
	}
}
