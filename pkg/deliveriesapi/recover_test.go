package deliveriesapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/apitest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/deliveriesapi"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// recoverFake is the recovery's webhook check and recoverer: the webhooks
// it knows, by id, and whether each is active.
type recoverFake struct {
	hooks   map[string]bool
	reads   int
	queued  int
	recover int
}

func (f *recoverFake) EventWebhookActive(_ context.Context, ws, kind, id string) (bool, error) {
	f.reads++
	active, ok := f.hooks[id]
	if !ok || ws != apitest.WorkspaceID || kind != events.KindOutbound {
		return false, chat.Errorf(chat.ENotFound, "no %s webhook %s", kind, id)
	}
	return active, nil
}

func (f *recoverFake) Recover(context.Context, string, string, string, time.Time, time.Time) (int, error) {
	f.recover++
	return f.queued, nil
}

// TestRecoverDecisionsInOrder: the credential, then an admin, then the
// webhook (404 before the body is read), then the body and its window,
// then the webhook's being active; only then the recovery.
func TestRecoverDecisionsInOrder(t *testing.T) {
	const active, inactive = "01JDA0000000000000000000WA", "01JDA0000000000000000000WB"
	now := time.Now()
	since := `{"since":"` + now.Add(-time.Hour).UTC().Format(time.RFC3339) + `"}`
	for _, tc := range []struct {
		name string
		auth apitest.RoleAuth
		id   string
		body string
		code int
		want string
	}{
		{"no credential", apitest.RoleAuth{Err: workspaces.ErrUnauthenticated()}, "no-such-id", "{", 401, "Unauthenticated."},
		{"a member", apitest.RoleAuth{Role: chat.RoleMember}, "no-such-id", "{", 403, ""},
		{"a malformed id", apitest.RoleAuth{Role: chat.RoleAdmin}, "not-an-id<script>", "{", 404, `{"message":"The webhook does not exist.","errors":{"code":["not_found"]}}`},
		{"an unknown webhook", apitest.RoleAuth{Role: chat.RoleAdmin}, "01JDA0000000000000000000WX", "{", 404, `{"message":"The webhook does not exist.","errors":{"code":["not_found"]}}`},
		{"a bad window on an inactive webhook", apitest.RoleAuth{Role: chat.RoleAdmin}, inactive, `{"since":"yesterday"}`, 422, `"since"`},
		{"an inactive webhook", apitest.RoleAuth{Role: chat.RoleAdmin}, inactive, since, 422, `"active"`},
		{"an active webhook", apitest.RoleAuth{Role: chat.RoleAdmin}, active, since, 202, `{"data":{"queued":2}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &recoverFake{hooks: map[string]bool{active: true, inactive: false}, queued: 2}
			mux := http.NewServeMux()
			mux.Handle("POST /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/recover",
				deliveriesapi.RecoverDeliveriesHandler(tc.auth, events.KindOutbound, f, f, func() time.Time { return now }))
			req := httptest.NewRequest("POST", "/api/v1/workspaces/"+apitest.WorkspaceID+"/outbound-webhooks/"+tc.id+"/recover", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("got %d %s, want %d with %s", rec.Code, rec.Body, tc.code, tc.want)
			}
			if (tc.code == 401 || tc.code == 403) && f.reads != 0 {
				t.Errorf("the webhook was read %d times before the caller was judged", f.reads)
			}
			if (f.recover == 1) != (tc.code == 202) {
				t.Errorf("recovered %d times, want once only on 202", f.recover)
			}
		})
	}
}
