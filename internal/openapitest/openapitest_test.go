package openapitest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/chatbridge/chat/internal/openapitest"
	"github.com/chatbridge/chat/pkg/httpapi"
)

const (
	room    = "01JD9N113GQYDPWDARF68MKWR7"
	ws      = "01JD9N0V80G9T6DXN5EAY6K8H4"
	webhook = "01JD9N13A8X2C6TZ2W9Q2V4S3K"

	joinBody = `{"data":{` +
		`"guest":{"id":"01JDZ8Y7K3Q4W5E6R7T8Y9A0GG","nickname":"Ana","preferred_language":"es-ES"},` +
		`"session":{"token":"gst_3q2-7wEjRkC0b8Yx1mN4pL6sT9uV2aZ5dF8gH1jK4lQ","token_type":"guest","header":"X-Service-Guest-Token","expires_at":"2026-11-22T12:00:00Z"},` +
		`"room":{"room_id":"` + room + `","workspace_id":"` + ws + `","channel_id":"01JD9N1048PXK951NGC7NEMZX9","name":"Support call","status":"active","expires_at":"2026-11-22T12:00:00Z"}}}`
	outboundItem = `{"id":"01JD9N15ZC4S8J4D3B1YQ7T0WD","workspace_id":"` + ws + `","name":"Deploy","url":"https://example.com/h",` +
		`"events":["message.created"],"active":true,"disabled_reason":null,"rate_limit":null,"created_at":"2026-11-01T09:00:00Z","updated_at":"2026-11-01T09:00:00Z"}`
	accepted = `{"data":{"id":"01JDZ8Y7K3Q4W5E6R7T8Y9A0M4","workspace_id":"` + ws + `","channel_id":"01JD9N0Z50BAKDWE0FBRMSFD5P",` +
		`"content":"hi","skip_translation":false,"author":{"type":"bot","name":"CI Bot","avatar_url":null},"status":"queued","created_at":"2026-11-22T10:00:00Z","attachments":[],"thread_id":null}}`
	unauthenticated = `{"message":"Unauthenticated."}`
)

func jsonHeader(kv ...string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req-1"}}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			h.Del(kv[i])
			continue
		}
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func rateLimited(kv ...string) http.Header {
	return jsonHeader(append([]string{"X-RateLimit-Limit", "600", "X-RateLimit-Remaining", "599", "X-RateLimit-Reset", "1795860060"}, kv...)...)
}

func errBody(code, msg string) string {
	return fmt.Sprintf(`{"message":%q,"errors":{"code":[%q]}}`, msg, code)
}

func TestValidate(t *testing.T) {
	v, err := openapitest.Default()
	if err != nil {
		t.Fatal(err)
	}
	join := "/api/v1/external/rooms/" + room + "/guests"
	outbound := "/api/v1/workspaces/" + ws + "/outbound-webhooks"
	inbound := "/webhooks/" + webhook + "/messages"
	for _, tc := range []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		wantErr      string // "" when the response must pass
	}{
		// Responses the document describes.
		{"join 201", "POST", join, 201, jsonHeader("Cache-Control", "no-store"), joinBody, ""},
		{"join re-join 200", "POST", join, 200, jsonHeader("Cache-Control", "no-store"), joinBody, ""},
		{"join 410", "POST", join, 410, jsonHeader(), errBody("temporary_room_expired", "The Temporary Room is not available."), ""},
		{"join 422", "POST", join, 422, jsonHeader(), `{"message":"The nickname field is required.","errors":{"nickname":["The nickname field is required."]}}`, ""},
		{"list 200", "GET", outbound, 200, jsonHeader("Cache-Control", "no-store"), `{"data":[` + outboundItem + `],"meta":{"next_cursor":null,"limit":25}}`, ""},
		{"list 401", "GET", outbound, 401, jsonHeader(), unauthenticated, ""},
		{"inbound 202", "POST", inbound, 202, rateLimited(), accepted, ""},
		{"inbound replay", "POST", inbound, 202, rateLimited("Idempotent-Replayed", "true"), accepted, ""},
		{"inbound 429", "POST", inbound, 429, rateLimited("Retry-After", "12"), errBody("quota_exceeded", "Over."), ""},
		{"inbound 422 reused", "POST", inbound, 422, rateLimited(), errBody("idempotency_key_reused", "Reused."), ""},
		{"unknown path", "GET", "/nope", 404, jsonHeader(), errBody("not_found", "The requested resource was not found."), ""},
		{"other method", "DELETE", join, 405, jsonHeader("Allow", "POST"), errBody("method_not_allowed", "The DELETE method is not supported for this route."), ""},
		{"other method, two allowed", "PUT", "/api/v1/external/rooms/" + room + "/messages", 405, jsonHeader("Allow", "GET, POST"), errBody("method_not_allowed", "No."), ""},
		{"non-ULID room id", "POST", "/api/v1/external/rooms/not-a-room/guests", 410, jsonHeader(), errBody("temporary_room_expired", "The Temporary Room is not available."), ""},

		// Tampered responses.
		{"leaked signing secret", "GET", outbound, 200, jsonHeader("Cache-Control", "no-store"),
			`{"data":[` + strings.TrimSuffix(outboundItem, "}") + `,"signing_secret":"whsig_x"}],"meta":{"next_cursor":null,"limit":25}}`, "signing_secret"},
		{"401 with extra fields", "GET", outbound, 401, jsonHeader(), `{"message":"Unauthenticated.","errors":{"code":["unauthenticated"]}}`, "errors"},
		{"401 with another message", "GET", outbound, 401, jsonHeader(), `{"message":"Unauthorized"}`, "Unauthenticated."},
		{"join without session.token", "POST", join, 201, jsonHeader("Cache-Control", "no-store"),
			strings.Replace(joinBody, `"token":"gst_3q2-7wEjRkC0b8Yx1mN4pL6sT9uV2aZ5dF8gH1jK4lQ",`, "", 1), "token"},
		{"join with a wrong type", "POST", join, 201, jsonHeader("Cache-Control", "no-store"),
			strings.Replace(joinBody, `"nickname":"Ana"`, `"nickname":5`, 1), "nickname"},
		{"join with a non-UTC timestamp", "POST", join, 201, jsonHeader("Cache-Control", "no-store"),
			strings.Replace(joinBody, `"2026-11-22T12:00:00Z"`, `"2026-11-22T13:00:00+01:00"`, 1), "expires_at"},
		{"limit as a string", "GET", outbound, 200, jsonHeader("Cache-Control", "no-store"), `{"data":[],"meta":{"next_cursor":null,"limit":"25"}}`, "limit"},
		{"meta without next_cursor", "GET", outbound, 200, jsonHeader("Cache-Control", "no-store"), `{"data":[],"meta":{"limit":25}}`, "next_cursor"},
		{"no X-Request-Id", "POST", join, 410, jsonHeader("X-Request-Id", ""), errBody("temporary_room_expired", "The Temporary Room is not available."), "X-Request-Id"},
		{"not JSON", "POST", join, 410, jsonHeader("Content-Type", "text/plain"), "gone", "Content-Type"},
		{"undocumented status", "POST", join, 429, jsonHeader(), errBody("quota_exceeded", "Over."), "status"},
		{"redirect on a route", "GET", outbound, 307, http.Header{"Location": {"/"}}, "", "307"},
		{"wrong 410 code", "POST", join, 410, jsonHeader(), errBody("not_found", "The Temporary Room is not available."), "temporary_room_expired"},
		{"422 on a field the endpoint lacks", "POST", join, 422, jsonHeader(), `{"message":"x","errors":{"content":["x"]}}`, "content"},
		{"inbound 202 without rate-limit headers", "POST", inbound, 202, jsonHeader(), accepted, "X-RateLimit"},
		{"inbound 429 without Retry-After", "POST", inbound, 429, rateLimited(), errBody("quota_exceeded", "Over."), "Retry-After"},
		{"accepted message with a person author", "POST", inbound, 202, rateLimited(), strings.Replace(accepted, `"type":"bot"`, `"type":"user"`, 1), "bot"},
		{"unknown path answered 200", "GET", "/nope", 200, jsonHeader(), `{}`, "404"},
		{"unknown path answered in text", "GET", "/nope", 404, jsonHeader("Content-Type", "text/plain; charset=utf-8"), "404 page not found\n", "Content-Type"},
		{"405 without Allow", "DELETE", join, 405, jsonHeader(), errBody("method_not_allowed", "No."), "Allow"},
		{"405 with a wrong Allow", "DELETE", join, 405, jsonHeader("Allow", "GET"), errBody("method_not_allowed", "No."), "Allow"},
		{"HEAD answered like GET", "HEAD", outbound, 200, jsonHeader("Cache-Control", "no-store"), "", "405"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			err := v.Validate(req, tc.status, tc.header, []byte(tc.body))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("got %v, want the response to pass", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("the response passed, want an error naming %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("got %v, want an error naming %q", err, tc.wantErr)
			}
		})
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestCheckReportsThroughTheTest(t *testing.T) {
	req := httptest.NewRequest("GET", "/api/v1/workspaces/"+ws+"/support-webhooks", nil)
	rec := &recorder{TB: t}
	openapitest.Check(rec, req, 401, jsonHeader(), []byte(unauthenticated))
	if len(rec.errors) != 0 {
		t.Fatalf("a described response failed: %v", rec.errors)
	}
	openapitest.Check(rec, req, 401, jsonHeader(), []byte(`{"message":"Unauthenticated.","token":"wsk_leak"}`))
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "token") {
		t.Fatalf("got %q, want one failure naming the extra field", rec.errors)
	}
}

// TestDocumentMatchesTheRouteTable fails when openapi.yaml describes an
// operation that the service does not route, or misses one it does.
func TestDocumentMatchesTheRouteTable(t *testing.T) {
	v, err := openapitest.Default()
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for path, item := range v.Doc().Paths.Map() {
		for method := range item.Operations() {
			got = append(got, method+" "+path)
		}
	}
	for _, r := range httpapi.Routes {
		want = append(want, r.Method+" "+r.Path)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("openapi.yaml operations:\n%s\n\nroute table:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
