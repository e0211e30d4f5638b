package integratorsapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chatbridge/chat/internal/apitest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/integratorsapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// testFake is the test's webhook read and tester.
type testFake struct {
	hooks map[string]delivery.Webhook
	reads int
	tests int
}

func (f *testFake) EventWebhook(_ context.Context, ws, kind, id string) (delivery.Webhook, error) {
	f.reads++
	w, ok := f.hooks[id]
	if !ok || ws != w.WorkspaceID || kind != w.Kind {
		return delivery.Webhook{}, chat.Errorf(chat.ENotFound, "no %s webhook %s", kind, id)
	}
	return w, nil
}

func (f *testFake) Test(_ context.Context, w delivery.Webhook) (delivery.Attempt, error) {
	f.tests++
	return delivery.Attempt{Delivery: events.Delivery{ID: "d-" + w.ID}, Status: delivery.StatusFailed, Error: "refused"}, nil
}

// TestWebhookTestDecisionsInOrder: the credential, then an admin, then the
// webhook of the function's kind in the workspace; only then the test.
func TestWebhookTestDecisionsInOrder(t *testing.T) {
	const id, support = "01JDA0000000000000000000WA", "01JDA0000000000000000000WB"
	notFound := `{"message":"The webhook does not exist.","errors":{"code":["not_found"]}}`
	for _, tc := range []struct {
		name string
		auth apitest.RoleAuth
		id   string
		code int
		want string
	}{
		{"no credential", apitest.RoleAuth{Err: workspaces.ErrUnauthenticated()}, "no-such-id", 401, "Unauthenticated."},
		{"a member", apitest.RoleAuth{Role: chat.RoleMember}, "no-such-id", 403, ""},
		{"a malformed id", apitest.RoleAuth{Role: chat.RoleAdmin}, "not-an-id<script>", 404, notFound},
		{"an unknown webhook", apitest.RoleAuth{Role: chat.RoleAdmin}, "01JDA0000000000000000000WX", 404, notFound},
		{"a webhook of another kind", apitest.RoleAuth{Role: chat.RoleAdmin}, support, 404, notFound},
		{"the webhook", apitest.RoleAuth{Role: chat.RoleAdmin}, id, 200, `"delivery_id":"d-` + id + `"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &testFake{hooks: map[string]delivery.Webhook{
				id:      {ID: id, Kind: integratorsapi.Outbound, WorkspaceID: apitest.WorkspaceID},
				support: {ID: support, Kind: integratorsapi.Support, WorkspaceID: apitest.WorkspaceID},
			}}
			mux := http.NewServeMux()
			mux.Handle("POST /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/test",
				integratorsapi.TestWebhookHandler(tc.auth, integratorsapi.Outbound, f, f))
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest("POST", "/api/v1/workspaces/"+apitest.WorkspaceID+"/outbound-webhooks/"+tc.id+"/test", nil))
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("got %d %s, want %d with %s", rec.Code, rec.Body, tc.code, tc.want)
			}
			if (tc.code == 401 || tc.code == 403) && f.reads != 0 {
				t.Errorf("the webhook was read %d times before the caller was judged", f.reads)
			}
			if (f.tests == 1) != (tc.code == 200) {
				t.Errorf("tested %d times, want once only on 200", f.tests)
			}
		})
	}
}
