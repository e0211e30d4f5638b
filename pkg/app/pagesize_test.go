package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/racetest"

	"github.com/chatbridge/chat/internal/openapitest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/messages"
)

// listedPage is one page of a list as a client receives it.
type listedPage struct {
	Data []json.RawMessage `json:"data"`
	Meta struct {
		NextCursor *string `json:"next_cursor"`
		Limit      int     `json:"limit"`
	} `json:"meta"`
}

// walk follows path's cursors from the first page to the one whose
// next_cursor is null, over a real loopback HTTP connection, and returns
// every item in order with the size of each page. Each page must be a 200
// whose body, as read from the wire, is at most 1 MiB and says so in
// Content-Length; hold at most limit items; cost at most maxCalls AWS calls;
// and, unless it is the last, hold at least one item.
func (w *world) walk(t *testing.T, path string, limit int, hdr map[string]string, maxCalls int) (items []json.RawMessage, sizes []int) {
	t.Helper()
	srv := httptest.NewServer(w.h) // 127.0.0.1
	defer srv.Close()
	cursor := ""
	for page := 0; ; page++ {
		if page > 200 {
			t.Fatalf("%s: more than 200 pages: the cursor does not advance", path)
		}
		target := path + "?limit=" + strconv.Itoa(limit)
		if cursor != "" {
			target += "&cursor=" + url.QueryEscape(cursor)
		}
		req, err := http.NewRequest(http.MethodGet, srv.URL+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		w.st.Calls.Reset()
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("page %d: read body: %v", page, err)
		}
		if page == 0 {
			// Every page has the same shape; validating a MiB of JSON each
			// time would only slow the test.
			openapitest.Check(t, httptest.NewRequest(http.MethodGet, target, nil), res.StatusCode, res.Header, body)
		}
		if res.StatusCode != 200 {
			t.Fatalf("page %d: status %d, want 200: %.300s", page, res.StatusCode, body)
		}
		if len(body) > httpapi.MaxPageBytes || res.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
			t.Fatalf("page %d: body %d bytes, Content-Length %s; want at most %d and equal", page, len(body), res.Header.Get("Content-Length"), httpapi.MaxPageBytes)
		}
		if n := w.st.Calls.Total(); n > maxCalls {
			t.Fatalf("page %d made %d AWS calls %v, want at most %d", page, n, w.st.Calls.Calls(), maxCalls)
		}
		var p listedPage
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if len(p.Data) > limit || p.Meta.Limit != limit {
			t.Fatalf("page %d: %d items, meta.limit %d; want at most %d and %d", page, len(p.Data), p.Meta.Limit, limit, limit)
		}
		items, sizes = append(items, p.Data...), append(sizes, len(body))
		if p.Meta.NextCursor == nil {
			return items, sizes
		}
		if len(p.Data) == 0 {
			t.Fatalf("page %d is empty but not the last", page)
		}
		cursor = *p.Meta.NextCursor
	}
}

// seedMessage stores a bot's message in the general channel, as an accepted
// webhook post stores it, created at.
func (w *world) seedMessage(t *testing.T, content string, at time.Time) string {
	t.Helper()
	m := chat.Message{ID: w.app.IDs.New(at), WorkspaceID: w.ws.ID, ChannelID: w.general,
		Author:  chat.Author{Type: chat.AuthorBot, ID: w.static.ID, Name: w.static.BotName, AvatarURL: w.static.BotAvatarURL},
		Content: content, SourceLanguage: "en", Status: chat.MessageQueued, CreatedAt: at}
	if problem := messages.CheckContent(content); problem != "" {
		t.Fatalf("seed content refused by the content rule: %s", problem)
	}
	if err := storetest.New(w.app.DB, w.app.Table).PutMessage(context.Background(), m); err != nil {
		t.Fatalf("seed message: %v", err)
	}
	return m.ID
}

// TestGuestListOfLargestMessagesIsComplete lists 40 messages of 40,000
// characters through a guest's view, for the characters whose JSON or
// UTF-8 is longest: every message once, newest first, each page within
// 1 MiB and three AWS calls, next_cursor null only on the last page. '<'
// escapes to \u003c (6 bytes), U+2028 to \u2028 (6 bytes), an emoji is 4
// bytes (2 UTF-16 units), U+FFFF 3 bytes. ASCII and '<' go through the
// webhook; U+2028, emoji and U+FFFF are seeded in the store, because the
// 64 KiB request body cannot carry 40,000 of them, while the content rule
// (and so any other way into a channel) allows them.
func TestGuestListOfLargestMessagesIsComplete(t *testing.T) {
	racetest.Payload(t)
	for _, tc := range []struct {
		name    string
		char    string
		webhook bool
	}{
		{"ascii", "a", true},
		{"less-than", "<", true},
		{"line separator", "\u2028", false},
		{"emoji", "\U0001F600", false},
		{"U+FFFF", "\uffff", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newRoomWorld(t)
			var want []string // newest first
			for i := 0; i < 40; i++ {
				// Each message is distinct: its number replaces its first characters.
				prefix := fmt.Sprintf("%02d ", i)
				content := prefix + strings.Repeat(tc.char, messages.MaxContentLen-len(prefix))
				var id string
				if tc.webhook {
					// Sent unescaped, as a client may: escaped, 40,000 '<' would pass 64 KiB.
					rec := w.postStatic(t, `{"content":"`+content+`"}`, nil)
					if rec.Code != 202 {
						t.Fatalf("post %d: %d %.300s", i, rec.Code, rec.Body)
					}
					var acc struct {
						Data struct {
							ID string `json:"id"`
						} `json:"data"`
					}
					json.Unmarshal(rec.Body.Bytes(), &acc)
					id = acc.Data.ID
				} else {
					id = w.seedMessage(t, content, time.Now().Add(time.Duration(i)*time.Millisecond))
				}
				want = append([]string{id + "|" + content}, want...)
			}
			// The default limit: every page here is cut by size (or is the last).
			for _, limit := range []int{25} {
				items, sizes := w.walk(t, w.msgsPath(w.room), limit, map[string]string{httpapi.GuestTokenHeader: w.guestToken}, 3)
				var got []string
				for _, it := range items {
					var v struct {
						ID              string `json:"id"`
						Content         string `json:"content"`
						OriginalContent string `json:"original_content"`
					}
					if err := json.Unmarshal(it, &v); err != nil {
						t.Fatal(err)
					}
					if v.Content != v.OriginalContent {
						t.Fatalf("message %s: content differs from original_content without a translation", v.ID)
					}
					got = append(got, v.ID+"|"+v.Content)
				}
				if len(got) != len(want) {
					t.Fatalf("limit %d: listed %d messages in pages of %v bytes, want %d", limit, len(got), sizes, len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("limit %d: item %d is %.40q, want %.40q: every message once, newest first", limit, i, got[i], want[i])
					}
				}
				t.Logf("limit %d: %d pages of %v bytes", limit, len(sizes), sizes)
			}
		})
	}
}

// TestGuestListShowsTheOriginalForATranslationTooLongForAPage stores, for
// a message of 40,000 '<', a translation of 300,000 '<' (a 300 KB item,
// 1.8 MB of JSON): its view could not fit a page, so the guest reads the
// original; the other message's translation of 40,000 '<' fits beside its
// original and is shown.
func TestGuestListShowsTheOriginalForATranslationTooLongForAPage(t *testing.T) {
	w := newRoomWorld(t) // the guest reads es-ES: the "es" translation serves it
	content := strings.Repeat("<", messages.MaxContentLen)
	now := time.Now()
	huge := w.seedMessage(t, content, now)
	fits := w.seedMessage(t, content, now.Add(time.Millisecond))
	for id, text := range map[string]string{huge: strings.Repeat("<", 300_000), fits: "es " + content[3:]} {
		if err := storetest.New(w.app.DB, w.app.Table).Translation.SaveTranslations(context.Background(), w.general, id,
			[]chat.Translation{{MessageID: id, Language: "es", Content: text, SourceLanguage: "en", CreatedAt: now}}, true); err != nil {
			t.Fatalf("save translation: %v", err)
		}
	}
	items, sizes := w.walk(t, w.msgsPath(w.room), 25, map[string]string{httpapi.GuestTokenHeader: w.guestToken}, 3)
	var got []string
	for _, it := range items {
		var v struct {
			ID         string `json:"id"`
			Content    string `json:"content"`
			Language   string `json:"language"`
			Translated bool   `json:"translated"`
		}
		json.Unmarshal(it, &v)
		got = append(got, fmt.Sprintf("%s|%d|%s|%v", v.ID, len(v.Content), v.Language, v.Translated))
	}
	want := []string{fits + "|40000|es|true", huge + "|40000|en|false"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("views %v in pages of %v bytes, want %v", got, sizes, want)
	}
}

// TestWebhookListOfLargeItemsIsComplete lists 25 outbound webhooks whose
// events hold 100,000 '<' each (a 100 KB item, 600 KB of JSON): DynamoDB's
// 1 MB page holds about ten, the 1 MiB body one; every webhook is reached,
// oldest first, each page within two AWS calls.
func TestWebhookListOfLargeItemsIsComplete(t *testing.T) {
	racetest.Payload(t)
	w := newWorld(t, 600)
	doc := &fixture.Document{Workspaces: []fixture.Workspace{w.ws}}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var want []string
	for i := 0; i < 25; i++ {
		var events []string
		for e := 0; e < 10; e++ {
			events = append(events, fmt.Sprintf("e%d.%02d", e, i)+strings.Repeat("<", 10_000))
		}
		name := fmt.Sprintf("hook %02d", i)
		want = append(want, name)
		doc.Workspaces[0].OutboundWebhooks = append(doc.Workspaces[0].OutboundWebhooks, fixture.OutboundWebhook{
			Name: name, URL: "https://example.invalid/hooks", Events: events,
			SigningSecret: fmt.Sprintf("whsig_large_list_secret_%02d", i), CreatedAt: base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
	}
	if err := doc.Complete(chat.NewIDs(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := storetest.New(w.app.DB, w.app.Table).Fixture.Apply(context.Background(), doc, time.Now()); err != nil {
		t.Fatal(err)
	}
	items, sizes := w.walk(t, "/api/v1/workspaces/"+w.ws.ID+"/outbound-webhooks", 25, map[string]string{"Authorization": "Bearer " + w.token}, 2)
	var got []string
	for _, it := range items {
		var v struct {
			Name   string   `json:"name"`
			Events []string `json:"events"`
		}
		json.Unmarshal(it, &v)
		if len(v.Events) != 10 {
			t.Fatalf("%s has %d events, want 10", v.Name, len(v.Events))
		}
		got = append(got, v.Name)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("listed %v in pages of %v bytes, want %v", got, sizes, want)
	}
}
