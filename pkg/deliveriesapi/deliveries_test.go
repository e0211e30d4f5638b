package deliveriesapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chatbridge/chat/internal/apitest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/deliveriesapi"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// adminAuth authorizes every request as an admin of the path's workspace.
type adminAuth struct{}

func (adminAuth) Authorize(_ context.Context, _, ws string) (workspaces.Principal, error) {
	return workspaces.Principal{WorkspaceID: ws, Role: chat.RoleAdmin}, nil
}

// redeliverFunc is a Redeliverer with a function field.
type redeliverFunc func(ctx context.Context, ws, kind, webhookID, deliveryID string) error

func (f redeliverFunc) Redeliver(ctx context.Context, ws, kind, webhookID, deliveryID string) error {
	return f(ctx, ws, kind, webhookID, deliveryID)
}

// TestRedeliverUnknownDeliveryIsAPlain404: an unknown or malformed delivery
// id answers like every other 404, without echoing the path's values or the
// store's sentence.
func TestRedeliverUnknownDeliveryIsAPlain404(t *testing.T) {
	store := redeliverFunc(func(_ context.Context, _, _, _, id string) error {
		// What delivery.Redeliverer and the store answer.
		return chat.Errorf(chat.ENotFound, "no delivery %q", id)
	})
	mux := http.NewServeMux()
	mux.Handle("POST /api/v1/workspaces/{workspace_id}/outbound-webhooks/{id}/deliveries/{delivery_id}/redeliver",
		deliveriesapi.RedeliverHandler(adminAuth{}, events.KindOutbound, store))
	for _, id := range []string{"01JDA0000000000000000000DL", "not-an-id<script>"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("POST", "/api/v1/workspaces/"+apitest.WorkspaceID+"/outbound-webhooks/01JDA0000000000000000000WH/deliveries/"+id+"/redeliver", nil))
		want := `{"message":"The requested resource was not found.","errors":{"code":["not_found"]}}`
		if rec.Code != 404 || rec.Body.String() != want {
			t.Errorf("redeliver %s: got %d %s, want 404 %s", id, rec.Code, rec.Body, want)
		}
		if strings.Contains(rec.Body.String(), id) {
			t.Errorf("redeliver %s: the body echoes the delivery id: %s", id, rec.Body)
		}
	}
}
