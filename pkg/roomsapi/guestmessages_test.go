package roomsapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/apitest"
	"github.com/chatbridge/chat/internal/openapitest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/messageview"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/roomsapi"
	"github.com/chatbridge/chat/pkg/webhooksapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

const (
	gmRoom      = "01JDZ8Y7K3Q4W5E6R7T8Y9A0RM"
	gmOtherRoom = "01JDZ8Y7K3Q4W5E6R7T8Y9A0RO"
	gmGoneRoom  = "01JDZ8Y7K3Q4W5E6R7T8Y9A0RG"
	gmChannel   = "01JDZ8Y7K3Q4W5E6R7T8Y9A0CH"
	gmGuest     = "01JDZ8Y7K3Q4W5E6R7T8Y9A0GU"

	gmUnauthenticated = `{"message":"Unauthenticated."}`
	gmForbidden       = `{"message":"This action is unauthorized.","errors":{"code":["forbidden"]}}`
	gmGone            = `{"message":"The Temporary Room is not available.","errors":{"code":["temporary_room_expired"]}}`
)

var gmNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// gmSessions is a rooms.SessionStore over maps, counting lookups.
type gmSessions struct {
	sessions map[string]chat.GuestSession
	rooms    map[string]chat.Room
	lookups  int
}

func (f *gmSessions) GuestSession(_ context.Context, hash, roomID string) (chat.GuestSession, *chat.Room, error) {
	f.lookups++
	var room *chat.Room
	if r, ok := f.rooms[roomID]; ok {
		room = &r
	}
	s, ok := f.sessions[hash]
	if !ok {
		return chat.GuestSession{}, room, chat.Errorf(chat.ENotFound, "none")
	}
	return s, room, nil
}

// gmAuth is the real guest authenticator on fake storage: gst_ana opens
// gmRoom, gst_other opens gmOtherRoom, gst_expired is past its expiry and
// gst_gone belongs to gmGoneRoom, which has closed.
func gmAuth() (*rooms.GuestAuth, *gmSessions) {
	f := &gmSessions{sessions: map[string]chat.GuestSession{}, rooms: map[string]chat.Room{
		gmRoom:      {ID: gmRoom, WorkspaceID: "W", ChannelID: gmChannel, Status: chat.RoomActive, ExpiresAt: gmNow.Add(time.Hour)},
		gmOtherRoom: {ID: gmOtherRoom, WorkspaceID: "W", ChannelID: "C2", Status: chat.RoomActive, ExpiresAt: gmNow.Add(time.Hour)},
		gmGoneRoom:  {ID: gmGoneRoom, WorkspaceID: "W", ChannelID: "C3", Status: chat.RoomClosed, ExpiresAt: gmNow.Add(time.Hour)},
	}}
	for tok, room := range map[string]string{"gst_ana": gmRoom, "gst_other": gmOtherRoom, "gst_expired": gmRoom, "gst_gone": gmGoneRoom} {
		exp := gmNow.Add(time.Hour)
		if tok == "gst_expired" {
			exp = gmNow.Add(-time.Minute)
		}
		h := chat.HashToken(tok)
		f.sessions[h] = chat.GuestSession{TokenHash: h, ExpiresAt: exp,
			Guest: chat.Guest{ID: gmGuest, RoomID: room, Nickname: "Ana", PreferredLanguage: "es-MX"}}
	}
	return &rooms.GuestAuth{Sessions: f, Now: func() time.Time { return gmNow }}, f
}

// gmStore is a message store over a slice kept newest first; positions are
// item indexes.
type gmStore struct {
	msgs         []chat.Message
	translations map[string]map[string]string
	put          func(m chat.Message) error
	calls        int
	listedFor    string
}

func (s *gmStore) PutMessage(_ context.Context, m chat.Message) error {
	s.calls++
	if s.put != nil {
		return s.put(m)
	}
	s.msgs = append([]chat.Message{m}, s.msgs...)
	return nil
}

func (s *gmStore) ListMessages(_ context.Context, channelID, after string, limit int) (chat.Page[chat.Message], error) {
	s.calls++
	s.listedFor = channelID
	return apitest.PageOf(s.msgs, after, limit), nil
}

func (s *gmStore) Translations(_ context.Context, ids, langs []string) (map[string]map[string]chat.Translation, error) {
	s.calls++
	out := map[string]map[string]chat.Translation{}
	for _, id := range ids {
		for _, l := range langs {
			if text, ok := s.translations[id][l]; ok {
				if out[id] == nil {
					out[id] = map[string]chat.Translation{}
				}
				out[id][l] = chat.Translation{MessageID: id, Language: l, Content: text}
			}
		}
	}
	return out, nil
}

// gmHandler mounts both guest message handlers on their routes, wrapped
// like every endpoint.
func gmHandler(t *testing.T, auth httpapi.GuestAuthenticator, st *gmStore) http.Handler {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET /api/v1/external/rooms/{room_id}/messages", roomsapi.GuestMessagesHandler(auth, &rooms.Lister{Store: st}, apitest.Codec(t), messageview.Renderer{}))
	mux.Handle("POST /api/v1/external/rooms/{room_id}/messages", roomsapi.PostGuestMessageHandler(auth,
		&rooms.Poster{Store: st, IDs: chat.NewIDs(), Now: func() time.Time { return gmNow }}, messageview.Renderer{}))
	return httpapi.Wrap(mux)
}

func gmDo(t *testing.T, h http.Handler, method, target, token, body string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if token != "" {
		req.Header.Set(httpapi.GuestTokenHeader, token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	openapitest.Check(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	return rec
}

func gmPath(room string) string { return "/api/v1/external/rooms/" + room + "/messages" }

func TestGuestMessagesTokenRules(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		for _, tc := range []struct {
			name, room, token string
			status            int
			body              string
		}{
			{"missing", gmRoom, "", 401, gmUnauthenticated},
			{"unknown", gmRoom, "gst_nobody", 401, gmUnauthenticated},
			{"workspace token", gmRoom, "wsk_member", 401, gmUnauthenticated},
			{"too long", gmRoom, "gst_" + strings.Repeat("x", 600), 401, gmUnauthenticated},
			{"expired", gmRoom, "gst_expired", 401, gmUnauthenticated},
			{"another room's token", gmRoom, "gst_other", 403, gmForbidden},
			{"room closed", gmGoneRoom, "gst_gone", 410, gmGone},
			{"room id not a ULID", "not-a-room", "gst_ana", 410, gmGone},
		} {
			auth, sessions := gmAuth()
			st := &gmStore{}
			// An invalid body too: the credential is judged first.
			rec := gmDo(t, gmHandler(t, auth, st), method, gmPath(tc.room), tc.token, `{"content":`, nil)
			if rec.Code != tc.status || strings.TrimSpace(rec.Body.String()) != tc.body {
				t.Errorf("%s %s: got %d %s, want %d %s", method, tc.name, rec.Code, rec.Body, tc.status, tc.body)
			}
			if st.calls != 0 {
				t.Errorf("%s %s: the message store was called %d times", method, tc.name, st.calls)
			}
			if sessions.lookups > 1 {
				t.Errorf("%s %s: %d session lookups, want at most 1", method, tc.name, sessions.lookups)
			}
			if rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("X-Request-Id") == "" {
				t.Errorf("%s %s: headers %v", method, tc.name, rec.Header())
			}
		}
	}
}

func TestGuestMessagesRepeatedTokenHeaderIsUnauthenticated(t *testing.T) {
	auth, sessions := gmAuth()
	req := httptest.NewRequest(http.MethodGet, gmPath(gmRoom), nil)
	req.Header.Add(httpapi.GuestTokenHeader, "gst_ana")
	req.Header.Add(httpapi.GuestTokenHeader, "gst_ana")
	rec := httptest.NewRecorder()
	gmHandler(t, auth, &gmStore{}).ServeHTTP(rec, req)
	if rec.Code != 401 || strings.TrimSpace(rec.Body.String()) != gmUnauthenticated {
		t.Fatalf("got %d %s, want 401 %s", rec.Code, rec.Body, gmUnauthenticated)
	}
	if sessions.lookups != 0 {
		t.Fatalf("%d lookups for an ambiguous credential, want 0", sessions.lookups)
	}
}

func TestPostGuestMessage(t *testing.T) {
	auth, _ := gmAuth()
	st := &gmStore{}
	rec := gmDo(t, gmHandler(t, auth, st), http.MethodPost, gmPath(gmRoom), "gst_ana", `{"content":"¿Hola, qué tal?","extra":true}`, nil)
	if rec.Code != http.StatusCreated {
		t.Fatalf("status %d, want 201; body %s", rec.Code, rec.Body)
	}
	if len(st.msgs) != 1 {
		t.Fatalf("stored %d messages, want 1", len(st.msgs))
	}
	m := st.msgs[0]
	if m.ChannelID != gmChannel || m.Author.Type != chat.AuthorGuest || m.Author.ID != gmGuest || m.Author.Name != "Ana" ||
		m.SourceLanguage != "es-MX" || m.Status != chat.MessageQueued || m.Content != "¿Hola, qué tal?" {
		t.Fatalf("stored %+v", m)
	}
	if rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", rec.Header().Get("Cache-Control"))
	}
	want := fmt.Sprintf(`{"data":{"id":%q,"channel_id":%q,"author":{"type":"guest","id":%q,"name":"Ana","avatar_url":null},`+
		`"content":"¿Hola, qué tal?","language":"es-MX","original_content":"¿Hola, qué tal?","original_language":"es-MX",`+
		`"translated":false,"created_at":"2026-11-22T10:00:00Z","revision":1,"edited_at":null,"deleted":false,"attachments":[],"thread_id":null,"reply_count":0,"last_reply_at":null,"reactions":[]}}`, m.ID, gmChannel, gmGuest)
	if got := strings.TrimSpace(rec.Body.String()); got != want {
		t.Fatalf("body\n%s\nwant\n%s", got, want)
	}
}

func TestPostGuestMessageValidation(t *testing.T) {
	for _, tc := range []struct {
		name, body, msg string
	}{
		{"missing", `{}`, "The content field is required."},
		{"null", `{"content":null}`, "The content field is required."},
		{"empty", `{"content":""}`, "The content field is required."},
		{"blank", `{"content":" \n\t "}`, "The content field is required."},
		{"number", `{"content":42}`, "The content field must be a string."},
		{"bool", `{"content":true}`, "The content field must be a string."},
		{"array", `{"content":["hi"]}`, "The content field must be a string."},
		{"object", `{"content":{"text":"hi"}}`, "The content field must be a string."},
		{"too long", `{"content":"` + strings.Repeat("a", messages.MaxContentLen+1) + `"}`, "The content field must not be greater than 40000 characters."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auth, _ := gmAuth()
			st := &gmStore{}
			rec := gmDo(t, gmHandler(t, auth, st), http.MethodPost, gmPath(gmRoom), "gst_ana", tc.body, map[string]string{"Content-Type": "application/json"})
			want := fmt.Sprintf(`{"message":%q,"errors":{"content":[%q]}}`, tc.msg, tc.msg)
			if rec.Code != 422 || strings.TrimSpace(rec.Body.String()) != want {
				t.Fatalf("got %d %s, want 422 %s", rec.Code, rec.Body, want)
			}
			if st.calls != 0 {
				t.Fatalf("the store was called for an invalid post")
			}
		})
	}
}

func TestPostGuestMessageAcceptsTheLongestContent(t *testing.T) {
	auth, _ := gmAuth()
	st := &gmStore{}
	content := strings.Repeat("a", messages.MaxContentLen)
	rec := gmDo(t, gmHandler(t, auth, st), http.MethodPost, gmPath(gmRoom), "gst_ana", `{"content":"`+content+`"}`, nil)
	if rec.Code != 201 || len(st.msgs) != 1 || st.msgs[0].Content != content {
		t.Fatalf("got %d with %d stored, want 201 and the content stored whole", rec.Code, len(st.msgs))
	}
}

func TestPostGuestMessageRejectsMalformedBodies(t *testing.T) {
	for _, tc := range []struct {
		name, body, ctype string
		status            int
		code              string
	}{
		{"empty", ``, "", 400, "invalid_json"},
		{"array", `[{"content":"hi"}]`, "", 400, "invalid_json"},
		{"truncated", `{"content":`, "", 400, "invalid_json"},
		{"duplicate key", `{"content":"a","content":"b"}`, "", 400, "invalid_json"},
		{"invalid utf8", "{\"content\":\"\xff\"}", "", 400, "invalid_json"},
		{"text/plain", `{"content":"hi"}`, "text/plain", 415, "unsupported_media_type"},
		{"too large", `{"content":"` + strings.Repeat("é", 40000) + `"}`, "", 413, "payload_too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auth, _ := gmAuth()
			st := &gmStore{}
			hdr := map[string]string{}
			if tc.ctype != "" {
				hdr["Content-Type"] = tc.ctype
			}
			rec := gmDo(t, gmHandler(t, auth, st), http.MethodPost, gmPath(gmRoom), "gst_ana", tc.body, hdr)
			want := fmt.Sprintf(`"errors":{"code":[%q]}`, tc.code)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), want) {
				t.Fatalf("got %d %s, want %d with %s", rec.Code, rec.Body, tc.status, want)
			}
			if st.calls != 0 {
				t.Fatalf("the store was called for a malformed body")
			}
		})
	}
}

func TestPostGuestMessageStoreFailure(t *testing.T) {
	auth, _ := gmAuth()
	st := &gmStore{put: func(chat.Message) error { return chat.Unavailable(fmt.Errorf("dynamo: secret detail")) }}
	rec := gmDo(t, gmHandler(t, auth, st), http.MethodPost, gmPath(gmRoom), "gst_ana", `{"content":"hi"}`, nil)
	want := `{"message":"The service is temporarily unavailable. Retry later.","errors":{"code":["service_unavailable"]}}`
	if rec.Code != 503 || strings.TrimSpace(rec.Body.String()) != want || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("got %d %s (Retry-After %q), want 503 %s with Retry-After", rec.Code, rec.Body, rec.Header().Get("Retry-After"), want)
	}
}

// gmHistory returns n messages newest first: M<n-1> ... M0, alternating a
// guest's Spanish and a bot's English.
func gmHistory(n int) []chat.Message {
	var out []chat.Message
	for i := n - 1; i >= 0; i-- {
		m := chat.Message{ID: fmt.Sprintf("M%02d", i), ChannelID: gmChannel, CreatedAt: gmNow.Add(time.Duration(i) * time.Second)}
		if i%2 == 0 {
			m.Author = chat.Author{Type: chat.AuthorBot, ID: "01JDZ8Y7K3Q4W5E6R7T8Y9A0WH", Name: "CI Bot", AvatarURL: "https://example.com/bot.png"}
			m.Content, m.SourceLanguage = fmt.Sprint("build ", i, " passed"), "en"
		} else {
			m.Author = chat.Author{Type: chat.AuthorGuest, ID: gmGuest, Name: "Ana", Language: "es-MX"}
			m.Content, m.SourceLanguage = fmt.Sprint("mensaje ", i), "es-MX"
		}
		out = append(out, m)
	}
	return out
}

func TestListGuestMessagesViews(t *testing.T) {
	auth, _ := gmAuth()
	st := &gmStore{msgs: gmHistory(3), translations: map[string]map[string]string{
		"M02": {"es": "compilación 2 correcta", "es-MX": "build 2 chido", "fr": "build 2 réussi"},
		"M00": {"es": "compilación 0 correcta"},
	}}
	// The translation function records the languages it stored on each message.
	st.msgs[0].TranslatedLanguages = []string{"es", "es-MX", "fr"} // M02
	st.msgs[2].TranslatedLanguages = []string{"es"}                // M00
	// A bot without an id or avatar renders them as null.
	st.msgs = append(st.msgs, chat.Message{ID: "MXX", ChannelID: gmChannel, Author: chat.Author{Type: chat.AuthorBot, Name: "Old Bot"},
		Content: "hi", SourceLanguage: "en", SkipTranslation: true, CreatedAt: gmNow})
	rec := gmDo(t, gmHandler(t, auth, st), http.MethodGet, gmPath(gmRoom), "gst_ana", "", nil)
	if rec.Code != 200 {
		t.Fatalf("status %d, want 200; body %s", rec.Code, rec.Body)
	}
	if st.listedFor != gmChannel {
		t.Fatalf("listed channel %q, want the room's %s", st.listedFor, gmChannel)
	}
	var body struct {
		Data []map[string]any `json:"data"`
		Meta map[string]any   `json:"meta"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Meta) != 2 || body.Meta["next_cursor"] != nil || body.Meta["limit"] != float64(25) {
		t.Fatalf("meta %v, want next_cursor null and limit 25", body.Meta)
	}
	var got []string
	for _, v := range body.Data {
		if len(v) != 17 {
			t.Fatalf("view has fields %v, want exactly 17", v)
		}
		a := v["author"].(map[string]any)
		got = append(got, fmt.Sprintf("%v|%v|%v|%v|%v|%v|%v|%v|%v|%v", v["id"], v["content"], v["language"], v["original_content"],
			v["original_language"], v["translated"], a["type"], a["id"], a["avatar_url"], v["created_at"]))
	}
	want := []string{
		"M02|build 2 chido|es-MX|build 2 passed|en|true|bot|01JDZ8Y7K3Q4W5E6R7T8Y9A0WH|https://example.com/bot.png|2026-11-22T10:00:02Z",
		"M01|mensaje 1|es-MX|mensaje 1|es-MX|false|guest|" + gmGuest + "|<nil>|2026-11-22T10:00:01Z",
		"M00|compilación 0 correcta|es|build 0 passed|en|true|bot|01JDZ8Y7K3Q4W5E6R7T8Y9A0WH|https://example.com/bot.png|2026-11-22T10:00:00Z",
		"MXX|hi|en|hi|en|false|bot|<nil>|<nil>|2026-11-22T10:00:00Z",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("views\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", rec.Header().Get("Cache-Control"))
	}
}

func TestListGuestMessagesPagination(t *testing.T) {
	auth, _ := gmAuth()
	st := &gmStore{msgs: gmHistory(27)}
	h := gmHandler(t, auth, st)
	path := gmPath(gmRoom) + "?limit=10"
	var ids []string
	var sizes []int
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatalf("more pages than expected")
		}
		rec := gmDo(t, h, http.MethodGet, path, "gst_ana", "", nil)
		if rec.Code != 200 {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		body := apitest.Decode(t, rec)
		data := body["data"].([]any)
		sizes = append(sizes, len(data))
		for _, it := range data {
			ids = append(ids, it.(map[string]any)["id"].(string))
		}
		next, _ := body["meta"].(map[string]any)["next_cursor"].(string)
		if next == "" {
			break
		}
		path = gmPath(gmRoom) + "?limit=10&cursor=" + next
	}
	if fmt.Sprint(sizes) != "[10 10 7]" {
		t.Fatalf("page sizes %v, want [10 10 7]", sizes)
	}
	for i, id := range ids {
		if want := fmt.Sprintf("M%02d", 26-i); id != want {
			t.Fatalf("item %d is %s, want %s (newest first, each once)", i, id, want)
		}
	}
}

func TestListGuestMessagesDefaultsAndValidation(t *testing.T) {
	auth, _ := gmAuth()
	st := &gmStore{msgs: gmHistory(30)}
	h := gmHandler(t, auth, st)
	if n := len(apitest.Decode(t, gmDo(t, h, http.MethodGet, gmPath(gmRoom), "gst_ana", "", nil))["data"].([]any)); n != 25 {
		t.Fatalf("default page has %d items, want 25", n)
	}
	codec := apitest.Codec(t)
	otherRoom := codec.Encode("room-messages:"+gmOtherRoom, "pos-10")
	workspaceList := codec.Encode("outbound-webhooks:"+gmRoom, "pos-10")
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "limit=", "limit=5&limit=6", "cursor=garbage", "cursor=" + otherRoom, "cursor=" + workspaceList} {
		st.calls = 0
		rec := gmDo(t, h, http.MethodGet, gmPath(gmRoom)+"?"+q, "gst_ana", "", nil)
		if rec.Code != 422 {
			t.Errorf("?%s: status %d, want 422", q, rec.Code)
			continue
		}
		errs := apitest.Decode(t, rec)["errors"].(map[string]any)
		if errs["limit"] == nil && errs["cursor"] == nil {
			t.Errorf("?%s: errors %v name neither limit nor cursor", q, errs)
		}
		if st.calls != 0 {
			t.Errorf("?%s: the store was called", q)
		}
	}
	own := codec.Encode("room-messages:"+gmRoom, "pos-28")
	if n := len(apitest.Decode(t, gmDo(t, h, http.MethodGet, gmPath(gmRoom)+"?cursor="+own, "gst_ana", "", nil))["data"].([]any)); n != 2 {
		t.Fatalf("page after pos-28 has %d items, want 2", n)
	}
}

// TestGuestTokenOpensNoWorkspaceEndpoint sends a live guest token to a
// workspace endpoint, guarded by the real workspace authenticator, both as
// a bearer token and in the guest header.
func TestGuestTokenOpensNoWorkspaceEndpoint(t *testing.T) {
	const ws = "01JDZ8Y7K3Q4W5E6R7T8Y9A0WS"
	const guestToken = "gst_V1yH2cM4m8bq0XxY7kzJc3lQbN5rTt9aUe6oPw2sD1g"
	lookups := 0
	auth := &workspaces.Authenticator{Tokens: gmTokenStore(func(string) (workspaces.APIToken, error) {
		lookups++
		return workspaces.APIToken{}, chat.Errorf(chat.ENotFound, "none")
	})}
	lists := &gmWebhooks{}
	codec := apitest.Codec(t)
	mux := http.NewServeMux()
	mux.Handle("GET /api/v1/workspaces/{workspace_id}/outbound-webhooks", webhooksapi.OutboundWebhooksHandler(auth, lists, codec))
	h := httpapi.Wrap(mux)
	for name, header := range map[string][2]string{
		"as bearer":       {"Authorization", "Bearer " + guestToken},
		"in guest header": {httpapi.GuestTokenHeader, guestToken},
	} {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/workspaces/"+ws+"/outbound-webhooks", nil)
		req.Header.Set(header[0], header[1])
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 401 || strings.TrimSpace(rec.Body.String()) != gmUnauthenticated {
			t.Errorf("%s: got %d %s, want 401 %s", name, rec.Code, rec.Body, gmUnauthenticated)
		}
	}
	if lists.calls != 0 {
		t.Fatalf("the webhook list was read %d times", lists.calls)
	}
	if lookups != 1 {
		t.Fatalf("%d token lookups, want 1 (the bearer attempt; the guest header is not a workspace credential)", lookups)
	}
}

type gmTokenStore func(hash string) (workspaces.APIToken, error)

func (f gmTokenStore) APIToken(_ context.Context, hash string) (workspaces.APIToken, error) {
	return f(hash)
}

type gmWebhooks struct{ calls int }

func (g *gmWebhooks) OutboundWebhooks(context.Context, string, string, int) (chat.Page[chat.OutboundWebhook], error) {
	g.calls++
	return chat.Page[chat.OutboundWebhook]{}, nil
}

func (g *gmWebhooks) SupportWebhooks(context.Context, string, string, int) (chat.Page[chat.SupportWebhook], error) {
	g.calls++
	return chat.Page[chat.SupportWebhook]{}, nil
}

// gmCounter is a rooms.PostCounter that counts in memory.
type gmCounter struct{ n map[string]int }

func (c *gmCounter) CountPost(_ context.Context, guest string, window time.Time, limit int) (bool, error) {
	k := guest + window.String()
	if c.n[k] >= limit {
		return false, nil
	}
	c.n[k]++
	return true, nil
}

func TestPostGuestMessageRateLimit(t *testing.T) {
	auth, _ := gmAuth()
	st := &gmStore{}
	now := gmNow.Add(12*time.Second + 300*time.Millisecond)
	mux := http.NewServeMux()
	mux.Handle("POST /api/v1/external/rooms/{room_id}/messages", roomsapi.PostGuestMessageHandler(auth,
		&rooms.Poster{Store: st, Rate: &gmCounter{n: map[string]int{}}, IDs: chat.NewIDs(), Now: func() time.Time { return now }}, messageview.Renderer{}))
	h := httpapi.Wrap(mux)
	for i := 1; i <= rooms.PostsPerMinute; i++ {
		if rec := gmDo(t, h, http.MethodPost, gmPath(gmRoom), "gst_ana", `{"content":"<b>\u2028 😀 \uffff"}`, nil); rec.Code != http.StatusCreated {
			t.Fatalf("post %d: %d %s, want 201", i, rec.Code, rec.Body)
		}
	}
	rec := gmDo(t, h, http.MethodPost, gmPath(gmRoom), "gst_ana", `{"content":"one too many"}`, nil)
	want := `{"message":"Too many messages. A guest posts at most 30 messages a minute.","errors":{"code":["quota_exceeded"]}}`
	if rec.Code != http.StatusTooManyRequests || strings.TrimSpace(rec.Body.String()) != want || rec.Header().Get("Retry-After") != "48" {
		t.Fatalf("post 31: %d %s (Retry-After %q), want 429 %s with Retry-After 48", rec.Code, rec.Body, rec.Header().Get("Retry-After"), want)
	}
	if len(st.msgs) != rooms.PostsPerMinute {
		t.Fatalf("stored %d messages, want %d", len(st.msgs), rooms.PostsPerMinute)
	}
	// A body that fails validation is answered 422 and not counted against anything.
	if rec := gmDo(t, h, http.MethodPost, gmPath(gmRoom), "gst_ana", `{"content":"  "}`, nil); rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("blank post past the limit: %d, want 422", rec.Code)
	}
}

// ThreadRoot finds no thread: the tests of this file post roots.
func (s *gmStore) ThreadRoot(context.Context, string, string) (string, error) {
	return "", chat.FieldError("thread_id", "unknown thread")
}
