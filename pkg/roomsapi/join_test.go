package roomsapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/apitest"
	"github.com/chatbridge/chat/internal/openapitest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

// fakeJoiner is a rooms service fake with a function field.
type fakeJoiner struct {
	join func(ctx context.Context, req rooms.JoinRequest) (rooms.JoinResult, error)
}

func (f *fakeJoiner) Join(ctx context.Context, req rooms.JoinRequest) (rooms.JoinResult, error) {
	return f.join(ctx, req)
}

const roomID = "01JDZ8Y7K3Q4W5E6R7T8Y9A0BC"

func okJoiner(got *rooms.JoinRequest) *fakeJoiner {
	return &fakeJoiner{join: func(_ context.Context, req rooms.JoinRequest) (rooms.JoinResult, error) {
		*got = req
		exp := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
		return rooms.JoinResult{
			Guest:          chat.Guest{ID: "01JDZ8Y7K3Q4W5E6R7T8Y9A0GG", Nickname: req.Nickname, PreferredLanguage: req.PreferredLanguage},
			Token:          "gst_secret",
			SessionExpires: exp,
			Room:           chat.Room{ID: req.RoomID, WorkspaceID: "W", ChannelID: "C", Name: "Support call", Status: chat.RoomActive, ExpiresAt: exp},
		}, nil
	}}
}

func serveJoin(t *testing.T, j roomsapi.Joiner, method, body string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	h := httpapi.Mux(map[string]http.Handler{"JoinRoomFunction": roomsapi.JoinHandler(j, nil)})
	req := httptest.NewRequest(method, "/api/v1/external/rooms/"+roomID+"/guests", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	openapitest.Check(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	return rec
}

func TestJoinValidation(t *testing.T) {
	long := strings.Repeat("é", 65)
	for _, tc := range []struct {
		name, body, field, msg string
	}{
		{"nickname missing", `{"preferred_language":"en"}`, "nickname", "The nickname field is required."},
		{"nickname null", `{"nickname":null,"preferred_language":"en"}`, "nickname", "The nickname field is required."},
		{"nickname blank", `{"nickname":"   ","preferred_language":"en"}`, "nickname", "The nickname field is required."},
		{"nickname number", `{"nickname":5,"preferred_language":"en"}`, "nickname", "The nickname field must be a string."},
		{"nickname too long", `{"nickname":"` + long + `","preferred_language":"en"}`, "nickname", "The nickname field must not be greater than 64 characters."},
		{"nickname control", `{"nickname":"a\u0007b","preferred_language":"en"}`, "nickname", "The nickname field contains invalid characters."},
		{"nickname newline", `{"nickname":"a\nb","preferred_language":"en"}`, "nickname", "The nickname field contains invalid characters."},
		{"nickname bidi override", `{"nickname":"a\u202eb","preferred_language":"en"}`, "nickname", "The nickname field contains invalid characters."},
		{"language missing", `{"nickname":"Ana"}`, "preferred_language", "The preferred language field is required."},
		{"language empty", `{"nickname":"Ana","preferred_language":""}`, "preferred_language", "The preferred language field is required."},
		{"language array", `{"nickname":"Ana","preferred_language":["en"]}`, "preferred_language", "The preferred language field must be a string."},
		{"language underscore", `{"nickname":"Ana","preferred_language":"en_US"}`, "preferred_language", "The preferred language field must be a valid language tag."},
		{"language too long", `{"nickname":"Ana","preferred_language":"en-` + strings.Repeat("a1b2c3d4-", 4) + `"}`, "preferred_language", "The preferred language field must be a valid language tag."},
		{"client id not uuid", `{"nickname":"Ana","preferred_language":"en","client_id":"abc"}`, "client_id", "The client id field must be a valid UUID."},
		{"client id braces", `{"nickname":"Ana","preferred_language":"en","client_id":"{6f9619ff-8b86-d011-b42d-00cf4fc964ff}"}`, "client_id", "The client id field must be a valid UUID."},
		{"client id number", `{"nickname":"Ana","preferred_language":"en","client_id":42}`, "client_id", "The client id field must be a string."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			j := &fakeJoiner{join: func(context.Context, rooms.JoinRequest) (rooms.JoinResult, error) {
				called = true
				return rooms.JoinResult{}, nil
			}}
			rec := serveJoin(t, j, http.MethodPost, tc.body, nil)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422; body %s", rec.Code, rec.Body)
			}
			if called {
				t.Fatalf("the service was called for an invalid request")
			}
			body := apitest.Decode(t, rec)
			if body["message"] != tc.msg {
				t.Errorf("message %q, want %q", body["message"], tc.msg)
			}
			errs, _ := body["errors"].(map[string]any)
			msgs, _ := errs[tc.field].([]any)
			if len(msgs) == 0 || msgs[0] != tc.msg {
				t.Errorf("errors.%s = %v, want [%q]", tc.field, errs[tc.field], tc.msg)
			}
		})
	}
}

func TestJoinMessageIsTheFirstFieldError(t *testing.T) {
	rec := serveJoin(t, okJoiner(new(rooms.JoinRequest)), http.MethodPost, `{"client_id":"x"}`, nil)
	body := apitest.Decode(t, rec)
	if body["message"] != "The nickname field is required." {
		t.Fatalf("message %q, want the nickname error first", body["message"])
	}
	errs := body["errors"].(map[string]any)
	for _, f := range []string{"nickname", "preferred_language", "client_id"} {
		if _, ok := errs[f]; !ok {
			t.Errorf("errors lacks %s: %v", f, errs)
		}
	}
}

func TestJoinSuccessShape(t *testing.T) {
	var got rooms.JoinRequest
	rec := serveJoin(t, okJoiner(&got), http.MethodPost,
		`{"nickname":"  Ana  ","preferred_language":"es-ES","client_id":"6F9619FF-8B86-D011-B42D-00CF4FC964FF","extra":1}`, nil)
	if rec.Code != http.StatusCreated {
		t.Fatalf("status %d, want 201; body %s", rec.Code, rec.Body)
	}
	if got.Nickname != "Ana" || got.PreferredLanguage != "es-ES" || got.RoomID != roomID {
		t.Fatalf("service got %+v, want trimmed nickname, language as sent and the path's room", got)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if rec.Header().Get("X-Request-Id") == "" {
		t.Errorf("no X-Request-Id")
	}
	data := apitest.Decode(t, rec)["data"].(map[string]any)
	session := data["session"].(map[string]any)
	if session["token_type"] != "guest" || session["header"] != "X-Service-Guest-Token" || session["token"] != "gst_secret" {
		t.Errorf("session %v", session)
	}
	keys := func(m any) []string {
		var ks []string
		for k := range m.(map[string]any) {
			ks = append(ks, k)
		}
		return ks
	}
	for part, want := range map[string]int{"guest": 3, "session": 4, "room": 6} {
		if n := len(keys(data[part])); n != want {
			t.Errorf("data.%s has %d fields %v, want %d", part, n, keys(data[part]), want)
		}
	}
}

func TestJoinRejectsMalformedBodies(t *testing.T) {
	for _, tc := range []struct {
		name, body, ctype string
		status            int
		code              string
	}{
		{"empty", ``, "", 400, "invalid_json"},
		{"array", `[]`, "", 400, "invalid_json"},
		{"string", `"x"`, "", 400, "invalid_json"},
		{"null", `null`, "", 400, "invalid_json"},
		{"truncated", `{"nickname":`, "", 400, "invalid_json"},
		{"trailing", `{"nickname":"a","preferred_language":"en"} {}`, "", 400, "invalid_json"},
		{"duplicate key", `{"nickname":"a","nickname":"b","preferred_language":"en"}`, "", 400, "invalid_json"},
		{"invalid utf8", "{\"nickname\":\"\xff\",\"preferred_language\":\"en\"}", "", 400, "invalid_json"},
		{"deep", `{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, "", 400, "invalid_json"},
		{"text/plain", `{"nickname":"a","preferred_language":"en"}`, "text/plain", 415, "unsupported_media_type"},
		{"too large", `{"nickname":"` + strings.Repeat("a", 70000) + `"}`, "", 413, "payload_too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.ctype != "" {
				hdr["Content-Type"] = tc.ctype
			}
			rec := serveJoin(t, okJoiner(new(rooms.JoinRequest)), http.MethodPost, tc.body, hdr)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d; body %s", rec.Code, tc.status, rec.Body)
			}
			codes := apitest.Decode(t, rec)["errors"].(map[string]any)["code"].([]any)
			if len(codes) != 1 || codes[0] != tc.code {
				t.Fatalf("code %v, want %s", codes, tc.code)
			}
		})
	}
}

func TestJoinErrorsFromTheService(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		body   string
	}{
		{rooms.ErrUnavailable(), 410, `{"message":"The Temporary Room is not available.","errors":{"code":["temporary_room_expired"]}}`},
		{chat.Unavailable(nil), 503, `{"message":"The service is temporarily unavailable. Retry later.","errors":{"code":["service_unavailable"]}}`},
		{chat.Internal(nil), 500, `{"message":"Something went wrong on our side.","errors":{"code":["internal_error"]}}`},
	} {
		j := &fakeJoiner{join: func(context.Context, rooms.JoinRequest) (rooms.JoinResult, error) { return rooms.JoinResult{}, tc.err }}
		rec := serveJoin(t, j, http.MethodPost, `{"nickname":"Ana","preferred_language":"en"}`, nil)
		if rec.Code != tc.status || strings.TrimSpace(rec.Body.String()) != tc.body {
			t.Errorf("got %d %s, want %d %s", rec.Code, rec.Body, tc.status, tc.body)
		}
		if tc.status == 503 && rec.Header().Get("Retry-After") == "" {
			t.Errorf("503 without Retry-After")
		}
	}
}

func TestUnknownRoutesAndMethods(t *testing.T) {
	h := httpapi.Mux(map[string]http.Handler{"JoinRoomFunction": roomsapi.JoinHandler(okJoiner(new(rooms.JoinRequest)), nil)})
	for _, tc := range []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"GET", "/api/v1/external/rooms/" + roomID + "/guests", 405, "method_not_allowed", "POST"},
		{"DELETE", "/api/v1/external/rooms/" + roomID + "/guests", 405, "method_not_allowed", "POST"},
		{"GET", "/nope", 404, "not_found", ""},
		{"POST", "/api/v1/external/rooms/" + roomID + "/guests/extra", 404, "not_found", ""},
	} {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, rec.Code, tc.status)
			continue
		}
		codes := apitest.Decode(t, rec)["errors"].(map[string]any)["code"].([]any)
		if codes[0] != tc.code {
			t.Errorf("%s %s: code %v, want %s", tc.method, tc.path, codes, tc.code)
		}
		if got := rec.Header().Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}
}

func TestPanicsBecomeContract500s(t *testing.T) {
	j := &fakeJoiner{join: func(context.Context, rooms.JoinRequest) (rooms.JoinResult, error) { panic("boom") }}
	rec := serveJoin(t, j, http.MethodPost, `{"nickname":"Ana","preferred_language":"en"}`, nil)
	if rec.Code != 500 || strings.Contains(rec.Body.String(), "boom") {
		t.Fatalf("got %d %s, want a 500 that does not leak the panic", rec.Code, rec.Body)
	}
}

func TestJoinRoomFull(t *testing.T) {
	j := &fakeJoiner{join: func(context.Context, rooms.JoinRequest) (rooms.JoinResult, error) {
		return rooms.JoinResult{}, rooms.ErrRoomFull()
	}}
	rec := serveJoin(t, j, http.MethodPost, `{"nickname":"Ana","preferred_language":"en"}`, nil)
	want := `{"message":"The Temporary Room is full.","errors":{"code":["room_full"]}}`
	if rec.Code != http.StatusConflict || strings.TrimSpace(rec.Body.String()) != want {
		t.Fatalf("got %d %s, want 409 %s", rec.Code, rec.Body, want)
	}
}
