package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/realtime"
)

// Demo users' tokens (fixtures/demo.json): Ana reads Spanish (es-ES), Ben
// English (en-US); both are members of the support channel.
const (
	demoAnaToken = "wsk_demo_ana_token"
	demoBenToken = "wsk_demo_ben_token"
)

// matrixReader is one reader of the support channel in the reconnect
// matrix: how it subscribes and whether it reads Spanish translations of
// Ben's English messages.
type matrixReader struct {
	name       string
	subscribe  func(t *testing.T, s *realtimeServer) map[string]string
	translated bool
}

// postAsBen posts content to the support channel as Ben (English) and, as
// the translation function would, stores its Spanish translation.
func (s *realtimeServer) postAsBen(t *testing.T, content string) string {
	t.Helper()
	id := s.postAsBenUntranslated(t, content, false)
	s.translate(t, id, 1, content)
	return id
}

// postAsBenUntranslated posts content as Ben with skip_translation as
// given, and translates nothing: the newest message a reader holds, whose
// state changes no more (its translation would land after it was stored,
// which a backfill from it reports).
func (s *realtimeServer) postAsBenUntranslated(t *testing.T, content string, skip bool) string {
	t.Helper()
	status, body := s.do(t, "POST", "/api/v1/workspaces/"+demoWorkspace+"/channels/"+demoSupport+"/messages",
		map[string]any{"content": content, "skip_translation": skip}, "Authorization", "Bearer "+demoBenToken)
	data, _ := body["data"].(map[string]any)
	id, _ := data["id"].(string)
	if status != 201 || id == "" {
		t.Fatalf("post: %d %v", status, body)
	}
	s.awaitChange(t, id, realtime.MessageStored)
	return id
}

// translate stores the Spanish translation of revision rev of message id
// ("[es] " + content) and waits for its push.
func (s *realtimeServer) translate(t *testing.T, id string, rev int, content string) {
	t.Helper()
	tr := chat.Translation{MessageID: id, Language: "es", Content: "[es] " + content, SourceLanguage: "en",
		CreatedAt: time.Now().UTC(), Revision: rev}
	if err := storetest.New(s.a.DB, s.a.Table).Translation.SaveRevision(context.Background(), demoSupport, id, rev, []chat.Translation{tr}, true); err != nil {
		t.Fatal(err)
	}
	s.awaitChange(t, id, realtime.MessageChanged)
}

// awaitChange waits until the push has acted on a change of kind to
// message id (earlier changes are passed over).
func (s *realtimeServer) awaitChange(t *testing.T, id string, kind realtime.ChangeKind) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case c := <-s.pushed:
			if c.Message.ID == id && c.Kind == kind {
				return
			}
		case <-deadline:
			t.Fatalf("the push of change %d of %s never ran", kind, id)
		}
	}
}

// TestReconnectMatrix: a reconnect with "since" for {guest, member} ×
// {same language, translated reader} × {nothing missed, messages missed,
// older messages edited or deleted}, on the strict local AWS (each function
// signs as itself): the backfill holds exactly what the reader lacks, in its
// language, oldest first, then "subscribed"; an older message's edit comes
// as message.updated with its new content (translated once its new
// revision's translation is stored), a deletion as message.deleted with no
// content anywhere in the frames. Each reader's since is a message that
// changes no more once stored (skip_translation), as a backfill also
// reports a translation landing after since was stored.
func TestReconnectMatrix(t *testing.T) {
	s := startRealtimeServer(t)
	readers := []matrixReader{
		{"guest, same language", func(t *testing.T, s *realtimeServer) map[string]string {
			return map[string]string{"token": s.join(t, "Rita", "en")}
		}, false},
		{"guest, translated", func(t *testing.T, s *realtimeServer) map[string]string {
			return map[string]string{"token": s.join(t, "Lucía", "es")}
		}, true},
		{"member, same language", func(*testing.T, *realtimeServer) map[string]string {
			return map[string]string{"token": demoBenToken, "workspace_id": demoWorkspace, "channel_id": demoSupport}
		}, false},
		{"member, translated", func(*testing.T, *realtimeServer) map[string]string {
			return map[string]string{"token": demoAnaToken, "workspace_id": demoWorkspace, "channel_id": demoSupport}
		}, true},
	}
	// shown is what reader r must see of content.
	shown := func(r matrixReader, content string) string {
		if r.translated {
			return "[es] " + content
		}
		return content
	}
	for _, r := range readers {
		t.Run(r.name+"/nothing missed", func(t *testing.T) {
			s.postAsBen(t, "Deploy started "+r.name)
			s.postAsBen(t, "Build 4812 passed "+r.name)
			m2 := s.postAsBenUntranslated(t, "`make build` "+r.name, true)
			got := s.reconnect(t, r, m2)
			assertFrames(t, got, []string{"subscribed"})
		})
		t.Run(r.name+"/messages missed", func(t *testing.T) {
			m0 := s.postAsBenUntranslated(t, "`make deploy` "+r.name, true)
			m1 := s.postAsBen(t, "Build 4813 passed "+r.name)
			m2 := s.postAsBen(t, "Build 4814 failed "+r.name)
			got := s.reconnect(t, r, m0)
			assertFrames(t, got, []string{
				"message " + m1 + " " + shown(r, "Build 4813 passed "+r.name),
				"message " + m2 + " " + shown(r, "Build 4814 failed "+r.name),
				"subscribed"})
		})
		t.Run(r.name+"/older edited or deleted", func(t *testing.T) {
			m0 := s.postAsBen(t, "The secret plan "+r.name)
			m1 := s.postAsBen(t, "Frank is on leave "+r.name)
			m2 := s.postAsBenUntranslated(t, "`git log` "+r.name, true)
			// While the reader is away: m1 is edited and its new revision
			// translated, then m0 is deleted; nothing new is posted.
			status, body := s.do(t, "PATCH", "/api/v1/workspaces/"+demoWorkspace+"/channels/"+demoSupport+"/messages/"+m1,
				map[string]any{"content": "Frank is back " + r.name}, "Authorization", "Bearer "+demoBenToken)
			if status != 200 {
				t.Fatalf("edit: %d %v", status, body)
			}
			s.awaitChange(t, m1, realtime.MessageEdited)
			s.translate(t, m1, 2, "Frank is back "+r.name)
			if status, body := s.do(t, "DELETE", "/api/v1/workspaces/"+demoWorkspace+"/channels/"+demoSupport+"/messages/"+m0,
				nil, "Authorization", "Bearer "+demoBenToken); status != 204 {
				t.Fatalf("delete: %d %v", status, body)
			}
			s.awaitChange(t, m0, realtime.MessageDeleted)
			got := s.reconnect(t, r, m2)
			assertFrames(t, got, []string{
				"message.updated " + m1 + " " + shown(r, "Frank is back "+r.name),
				"message.deleted " + m0 + " ",
				"subscribed"})
			for _, f := range got {
				if strings.Contains(fmt.Sprint(f), "The secret plan") {
					t.Fatalf("a frame carries the deleted message's content: %v", f)
				}
			}
		})
	}
}

// reconnect subscribes r anew with since and returns every frame up to
// the pong that follows "subscribed" (so Ready's held pushes are in).
func (s *realtimeServer) reconnect(t *testing.T, r matrixReader, since string) []map[string]any {
	t.Helper()
	req := r.subscribe(t, s)
	req["action"], req["since"] = "subscribe", since
	c := s.dial(t)
	c.send(req)
	return c.until()
}

// assertFrames compares frames, each rendered "<type> <id> <content>" (a
// "subscribed" frame as its type alone), with want.
func assertFrames(t *testing.T, frames []map[string]any, want []string) {
	t.Helper()
	var got []string
	for _, f := range frames {
		if f["type"] == "subscribed" {
			got = append(got, "subscribed")
			continue
		}
		if f["type"] == "error" {
			t.Fatalf("frames %v: an error", frames)
		}
		data, _ := f["data"].(map[string]any)
		content, _ := data["content"].(string)
		got = append(got, fmt.Sprint(f["type"], " ", messageID(f), " ", content))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("frames:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestReconnectReload: a backfill that cannot hold every change is one
// backfill_truncated with no cursor and reload: true, then "subscribed":
// when since is older than the change log keeps, and when more held
// messages changed than the backfill's 200 frames (as the change log says;
// a message changed twice counts once).
func TestReconnectReload(t *testing.T) {
	s := startRealtimeServer(t)
	token := s.join(t, "Rita", "en")
	reload := func(t *testing.T, since string) {
		t.Helper()
		c := s.dial(t)
		c.send(map[string]string{"action": "subscribe", "token": token, "since": since})
		got := c.until()
		if len(got) != 2 || got[0]["type"] != "backfill_truncated" || got[0]["reload"] != true || got[0]["next_cursor"] != nil || got[1]["type"] != "subscribed" {
			t.Fatalf("frames %v, want backfill_truncated with reload and no cursor, then subscribed", got)
		}
	}
	ids := chat.NewIDs()
	t.Run("since older than the change log", func(t *testing.T) {
		reload(t, ids.New(time.Now().Add(-realtime.ChangeRetention-time.Minute)))
	})
	t.Run("more changes than frames", func(t *testing.T) {
		since := s.postAsBenUntranslated(t, "since", true)
		conns := storetest.New(s.a.DB, s.a.Table).Conns
		now := time.Now()
		older := make([]string, realtime.MaxBackfill)
		for i := range older {
			older[i] = ids.New(now.Add(-time.Hour))
		}
		for i, id := range older {
			// The first 199 once, then the first again: 199 messages.
			if i == len(older)-1 {
				id = older[0]
			}
			if err := conns.LogChange(context.Background(), demoSupport, id, now.Add(time.Duration(i)*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
		}
		c := s.dial(t)
		c.send(map[string]string{"action": "subscribe", "token": token, "since": since})
		if got := c.until(); len(got) != 1 || got[0]["type"] != "subscribed" {
			// 199 logged messages that do not exist: nothing to send.
			t.Fatalf("199 changed messages: %v, want subscribed alone", got)
		}
		if err := conns.LogChange(context.Background(), demoSupport, ids.New(now.Add(-time.Hour)), now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		reload(t, since)
	})
}

// TestDeletedNeverPushedAgain: a reader connected while a message is
// posted, translated and deleted gets its content, then message.deleted,
// and nothing of it after: a late translation of the deleted message is
// refused by the store and pushes nothing; an edit is refused (410); a
// reconnect from before the message sends its stored state, the tombstone
// (deleted, no content).
func TestDeletedNeverPushedAgain(t *testing.T) {
	s := startRealtimeServer(t)
	token := s.join(t, "Lucía", "es")
	c := s.dial(t)
	if got := c.subscribe(map[string]string{"token": token}); got["type"] != "subscribed" {
		t.Fatalf("subscribe: %v", got)
	}
	before := s.postAsBenUntranslated(t, "before", true)
	m := s.postAsBen(t, "The secret plan")
	if status, body := s.do(t, "DELETE", "/api/v1/workspaces/"+demoWorkspace+"/channels/"+demoSupport+"/messages/"+m,
		nil, "Authorization", "Bearer "+demoBenToken); status != 204 {
		t.Fatalf("delete: %d %v", status, body)
	}
	s.awaitChange(t, m, realtime.MessageDeleted)
	tr := chat.Translation{MessageID: m, Language: "es", Content: "[es] The secret plan, late", SourceLanguage: "en", CreatedAt: time.Now().UTC(), Revision: 1}
	if err := storetest.New(s.a.DB, s.a.Table).Translation.SaveRevision(context.Background(), demoSupport, m, 1, []chat.Translation{tr}, true); err != nil {
		t.Fatal(err)
	}
	if status, _ := s.do(t, "PATCH", "/api/v1/workspaces/"+demoWorkspace+"/channels/"+demoSupport+"/messages/"+m,
		map[string]any{"content": "The secret plan, again"}, "Authorization", "Bearer "+demoBenToken); status != 410 {
		t.Fatalf("edit of a deleted message: %d, want 410", status)
	}
	frames := c.until()
	var got []string
	for _, f := range frames {
		data, _ := f["data"].(map[string]any)
		content, _ := data["content"].(string)
		got = append(got, fmt.Sprint(f["type"], " ", messageID(f), " ", content))
	}
	want := []string{"message " + before + " before", "message " + m + " The secret plan",
		"message.updated " + m + " [es] The secret plan", "message.deleted " + m + " "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("frames:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A reconnect from before it: the message's stored state is a
	// tombstone, and no frame carries its content.
	r := s.dial(t)
	r.send(map[string]string{"action": "subscribe", "token": token, "since": before})
	back := r.until()
	for _, f := range back {
		if strings.Contains(fmt.Sprint(f), "secret plan") {
			t.Fatalf("a reconnect's frame carries the deleted content: %v", f)
		}
	}
	data, _ := back[0]["data"].(map[string]any)
	if len(back) != 2 || back[0]["type"] != "message" || data["id"] != m || data["deleted"] != true || back[1]["type"] != "subscribed" {
		t.Fatalf("reconnect from before it: %v, want its tombstone, then subscribed", back)
	}
}
