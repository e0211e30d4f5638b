package roomsapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/openapitest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/messageview"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/roomsapi"
	"github.com/chatbridge/chat/pkg/webhooksapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// The fuzz targets of the request decoders. Each drives a real handler,
// mounted by httpapi.Mux like every endpoint, over small fakes, checks the
// contract's answer shape and holds the response to openapi.yaml. Seeds
// live in testdata/fuzz/<target>.

const (
	fuzzRoom    = "01JDZ8Y7K3Q4W5E6R7T8Y9A0FR"
	fuzzWS      = "01JDZ8Y7K3Q4W5E6R7T8Y9A0FW"
	fuzzToken   = "gst_fuzz_token_0123456789abcdefghijklmnopqrstu"
	fuzzAPIKey  = "wsk_fuzz_token_0123456789abcdefghijklmnopqrstu"
	fuzzChannel = "01JDZ8Y7K3Q4W5E6R7T8Y9A0FC"
)

var fuzzNow = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fuzzRequest builds a request; escaped is an already escaped path.
func fuzzRequest(method, escaped, contentType string, body []byte) *http.Request {
	req := httptest.NewRequest(method, "http://example.com/", bytes.NewReader(body))
	req.URL = &url.URL{Path: mustUnescape(escaped), RawPath: escaped}
	req.RequestURI = escaped
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

func mustUnescape(p string) string {
	u, err := url.PathUnescape(p)
	if err != nil {
		panic(err)
	}
	return u
}

// checkAnswer asserts what every answer shares: described by openapi.yaml,
// never a 5xx, a JSON body
// with Content-Type application/json, and for a 4xx the contract's error
// shape (the exact Unauthenticated body for a 401 when exact401 is set).
// It returns the decoded body.
func checkAnswer(t *testing.T, req *http.Request, rec *httptest.ResponseRecorder, exact401 bool, fields ...string) map[string]json.RawMessage {
	t.Helper()
	openapitest.Check(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	if rec.Code >= 500 {
		t.Fatalf("status %d, a 5xx; body %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("status %d with Content-Type %q", rec.Code, ct)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("status %d, body %q is not a JSON object: %v", rec.Code, rec.Body, err)
	}
	if rec.Code < 400 {
		return body
	}
	if rec.Code == http.StatusUnauthorized && exact401 {
		if got := strings.TrimSpace(rec.Body.String()); got != `{"message":"Unauthenticated."}` {
			t.Fatalf("401 body %s, want exactly the Unauthenticated body", got)
		}
		return body
	}
	var msg string
	var errs map[string][]string
	if json.Unmarshal(body["message"], &msg) != nil || msg == "" || json.Unmarshal(body["errors"], &errs) != nil || len(errs) == 0 || len(body) != 2 {
		t.Fatalf("status %d, body %s is not {message, errors}", rec.Code, rec.Body)
	}
	if codes, ok := errs["code"]; ok {
		if len(errs) != 1 || len(codes) != 1 || chat.Status(codes[0]) != rec.Code {
			t.Fatalf("status %d with errors %v", rec.Code, errs)
		}
		return body
	}
	if rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d with field errors %v", rec.Code, errs)
	}
	first := false
	for f, list := range errs {
		if len(list) == 0 {
			t.Fatalf("errors.%s is empty", f)
		}
		first = first || list[0] == msg
		known := false
		for _, want := range fields {
			known = known || f == want
		}
		if !known {
			t.Fatalf("a validation error on %q, want only %v: %s", f, fields, rec.Body)
		}
	}
	if !first {
		t.Fatalf("message %q is no field's first error: %v", msg, errs)
	}
	return body
}

// fuzzJoiner is a rooms service fake: it records what it was asked and
// answers like rooms.Service for a room id that is not a ULID.
type fuzzJoiner struct {
	calls int
	got   rooms.JoinRequest
}

func (f *fuzzJoiner) Join(_ context.Context, req rooms.JoinRequest) (rooms.JoinResult, error) {
	f.calls++
	f.got = req
	if !chat.ValidID(req.RoomID) {
		return rooms.JoinResult{}, rooms.ErrUnavailable()
	}
	exp := fuzzNow.Add(time.Hour)
	return rooms.JoinResult{
		Guest:          chat.Guest{ID: "01JDZ8Y7K3Q4W5E6R7T8Y9A0GG", Nickname: req.Nickname, PreferredLanguage: req.PreferredLanguage},
		Token:          "gst_secret",
		SessionExpires: exp,
		Room:           chat.Room{ID: req.RoomID, WorkspaceID: fuzzWS, ChannelID: fuzzChannel, Name: "Support call", Status: chat.RoomActive, ExpiresAt: exp},
	}, nil
}

// FuzzJoinRequest sends fuzzed bodies, Content-Types and room ids to the
// join handler: never a 5xx, always the contract's shape, and the service
// is only ever asked for a valid join (trimmed nickname of 1-64 characters
// without control or format characters, a well-formed language tag, a
// canonical UUID or no client id).
func FuzzJoinRequest(f *testing.F) {
	f.Fuzz(func(t *testing.T, room, contentType string, body []byte) {
		j := &fuzzJoiner{}
		h := httpapi.Mux(map[string]http.Handler{"JoinRoomFunction": roomsapi.JoinHandler(j, nil)})
		rec := httptest.NewRecorder()
		r := fuzzRequest("POST", "/api/v1/external/rooms/"+url.PathEscape(room)+"/guests", contentType, body)
		h.ServeHTTP(rec, r)
		out := checkAnswer(t, r, rec, false, "nickname", "preferred_language", "client_id")
		if j.calls == 0 {
			if rec.Code < 400 {
				t.Fatalf("status %d without a join", rec.Code)
			}
			return
		}
		req := j.got
		if req.RoomID != room {
			t.Fatalf("joined room %q, want the path's %q", req.RoomID, room)
		}
		if n, problem := rooms.NormalizeNickname(req.Nickname); problem != "" || n != req.Nickname {
			t.Fatalf("joined with nickname %q (%s)", req.Nickname, problem)
		}
		if !chat.ValidLanguageTag(req.PreferredLanguage) {
			t.Fatalf("joined with language %q", req.PreferredLanguage)
		}
		if req.ClientID != "" && !rooms.ValidClientID(req.ClientID) {
			t.Fatalf("joined with client id %q", req.ClientID)
		}
		if rec.Code == http.StatusCreated {
			var data struct {
				Guest struct {
					Nickname          string `json:"nickname"`
					PreferredLanguage string `json:"preferred_language"`
				} `json:"guest"`
			}
			if err := json.Unmarshal(out["data"], &data); err != nil || data.Guest.Nickname != req.Nickname || data.Guest.PreferredLanguage != req.PreferredLanguage {
				t.Fatalf("201 body %s does not echo the join %+v", rec.Body, req)
			}
		} else if rec.Code != http.StatusGone {
			t.Fatalf("status %d after a join", rec.Code)
		}
	})
}

// fuzzSessions is a rooms.SessionStore holding one guest's session in
// fuzzRoom.
type fuzzSessions struct{}

func (fuzzSessions) GuestSession(_ context.Context, hash, roomID string) (chat.GuestSession, *chat.Room, error) {
	var room *chat.Room
	if roomID == fuzzRoom {
		room = &chat.Room{ID: fuzzRoom, WorkspaceID: fuzzWS, ChannelID: fuzzChannel, Status: chat.RoomActive, ExpiresAt: fuzzNow.Add(time.Hour)}
	}
	if hash != chat.HashToken(fuzzToken) {
		return chat.GuestSession{}, room, chat.Errorf(chat.ENotFound, "no session")
	}
	return chat.GuestSession{TokenHash: hash, ExpiresAt: fuzzNow.Add(time.Hour),
		Guest: chat.Guest{ID: "01JDZ8Y7K3Q4W5E6R7T8Y9A0FG", RoomID: fuzzRoom, WorkspaceID: fuzzWS, ChannelID: fuzzChannel, Nickname: "Ana", PreferredLanguage: "es"}}, room, nil
}

// fuzzWriter is a rooms.MessageWriter keeping what it stored.
type fuzzWriter struct{ stored []chat.Message }

func (w *fuzzWriter) PutMessage(_ context.Context, m chat.Message) error {
	w.stored = append(w.stored, m)
	return nil
}

// FuzzGuestPost sends fuzzed tokens, room ids, Content-Types and bodies to
// the guest message POST route, with the real guest authenticator and
// poster over fakes: never a 5xx, the exact 401 body, and a message is
// stored only for the right token in its own room, with acceptable content.
func FuzzGuestPost(f *testing.F) {
	f.Fuzz(func(t *testing.T, token, room, contentType string, body []byte) {
		w := &fuzzWriter{}
		auth := &rooms.GuestAuth{Sessions: fuzzSessions{}, Now: func() time.Time { return fuzzNow }}
		h := httpapi.Mux(map[string]http.Handler{"PostGuestMessageFunction": roomsapi.PostGuestMessageHandler(auth,
			&rooms.Poster{Store: w, IDs: chat.NewIDs(), Now: func() time.Time { return fuzzNow }}, messageview.Renderer{})})
		req := fuzzRequest("POST", "/api/v1/external/rooms/"+url.PathEscape(room)+"/messages", contentType, body)
		req.Header[httpapi.GuestTokenHeader] = []string{token}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		out := checkAnswer(t, req, rec, true, "content")
		authorized := strings.TrimSpace(token) == fuzzToken && room == fuzzRoom
		if !authorized && (rec.Code < 400 || len(w.stored) > 0) {
			t.Fatalf("token %q on room %q: status %d, %d stored", token, room, rec.Code, len(w.stored))
		}
		if rec.Code != http.StatusCreated {
			if len(w.stored) > 0 {
				t.Fatalf("status %d, yet a message was stored", rec.Code)
			}
			return
		}
		if len(w.stored) != 1 {
			t.Fatalf("201 with %d messages stored", len(w.stored))
		}
		m := w.stored[0]
		if problem := messages.CheckContent(m.Content); problem != "" {
			t.Fatalf("stored content %q: %s", m.Content, problem)
		}
		var data struct {
			Content string `json:"content"`
		}
		if err := json.Unmarshal(out["data"], &data); err != nil || data.Content != m.Content {
			t.Fatalf("201 body %s, stored %q", rec.Body, m.Content)
		}
		if m.ChannelID != fuzzChannel || m.Author.Type != chat.AuthorGuest {
			t.Fatalf("stored %+v, want the guest's post in the room's channel", m)
		}
	})
}

// fuzzTokens is a workspaces.TokenStore with one member of fuzzWS.
type fuzzTokens struct{}

func (fuzzTokens) APIToken(_ context.Context, hash string) (workspaces.APIToken, error) {
	if hash != chat.HashToken(fuzzAPIKey) {
		return workspaces.APIToken{}, chat.Errorf(chat.ENotFound, "no token")
	}
	return workspaces.APIToken{Hash: hash, WorkspaceID: fuzzWS, UserID: "01JDZ8Y7K3Q4W5E6R7T8Y9A0FU"}, nil
}

// fuzzWebhooks lists three webhooks of each kind; positions are "0".."2".
type fuzzWebhooks struct{}

func fuzzPage[T any](items []T, after string, limit int) (chat.Page[T], error) {
	start := 0
	if after != "" {
		if len(after) != 1 || after[0] < '0' || after[0] > '2' {
			return chat.Page[T]{}, chat.FieldError("cursor", "The cursor is invalid.")
		}
		start = int(after[0]-'0') + 1
	}
	end := min(start+limit, len(items))
	p := chat.Page[T]{Items: items[start:end]}
	for i := start; i < end; i++ {
		p.After = append(p.After, string(rune('0'+i)))
	}
	if end < len(items) {
		p.Next = string(rune('0' + end - 1))
	}
	return p, nil
}

func (fuzzWebhooks) OutboundWebhooks(_ context.Context, ws, after string, limit int) (chat.Page[chat.OutboundWebhook], error) {
	items := make([]chat.OutboundWebhook, 3)
	for i := range items {
		items[i] = chat.OutboundWebhook{ID: "O" + string(rune('0'+i)), WorkspaceID: ws, CreatedAt: fuzzNow, UpdatedAt: fuzzNow}
	}
	return fuzzPage(items, after, limit)
}

func (fuzzWebhooks) SupportWebhooks(_ context.Context, ws, after string, limit int) (chat.Page[chat.SupportWebhook], error) {
	return chat.Page[chat.SupportWebhook]{}, nil
}

// FuzzListQuery sends fuzzed query strings and Authorization headers to a
// workspace list: never a 5xx, the exact 401 body, validation errors only
// on limit and cursor, and a 200 only with a limit of 1 to 100 that
// meta.limit reports.
func FuzzListQuery(f *testing.F) {
	codec, err := cursor.New([]byte("fuzz-cursor-key-0123456789abcdef"))
	if err != nil {
		f.Fatal(err)
	}
	// A real cursor, so that mutations reach the MAC check and the store.
	f.Add("Bearer "+fuzzAPIKey, "limit=1&cursor="+url.QueryEscape(codec.Encode("outbound-webhooks:"+fuzzWS, "0")))
	f.Fuzz(func(t *testing.T, authorization, rawQuery string) {
		h := httpapi.Mux(map[string]http.Handler{"ListOutboundWebhooksFunction": webhooksapi.OutboundWebhooksHandler(
			&workspaces.Authenticator{Tokens: fuzzTokens{}}, fuzzWebhooks{}, codec)})
		req := fuzzRequest("GET", "/api/v1/workspaces/"+fuzzWS+"/outbound-webhooks", "", nil)
		req.URL.RawQuery = rawQuery
		req.Header["Authorization"] = []string{authorization}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		out := checkAnswer(t, req, rec, true, "limit", "cursor")
		if rec.Code != http.StatusOK {
			return
		}
		if workspaces.BearerToken(authorization) != fuzzAPIKey {
			t.Fatalf("200 for Authorization %q", authorization)
		}
		var meta struct {
			Limit      int     `json:"limit"`
			NextCursor *string `json:"next_cursor"`
		}
		var data []json.RawMessage
		if json.Unmarshal(out["meta"], &meta) != nil || json.Unmarshal(out["data"], &data) != nil {
			t.Fatalf("200 body %s", rec.Body)
		}
		if meta.Limit < 1 || meta.Limit > 100 || len(data) > meta.Limit {
			t.Fatalf("query %q: limit %d with %d items", rawQuery, meta.Limit, len(data))
		}
		if meta.NextCursor != nil {
			if _, err := codec.Decode("outbound-webhooks:"+fuzzWS, *meta.NextCursor); err != nil {
				t.Fatalf("next_cursor %q does not decode: %v", *meta.NextCursor, err)
			}
		}
	})
}

// ThreadRoot finds no thread: the tests of this file post roots.
func (w *fuzzWriter) ThreadRoot(context.Context, string, string) (string, error) {
	return "", chat.FieldError("thread_id", "unknown thread")
}
