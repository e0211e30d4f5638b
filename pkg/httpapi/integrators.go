package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// WebhookTester sends a webhook.test event to a webhook now, once
// (delivery.Tester through the app's conversion of the webhook).
type WebhookTester interface {
	Test(ctx context.Context, w webhooks.Webhook) (delivery.Attempt, error)
}

// DeliveryRecoverer queues a webhook's failed deliveries of a window again
// (delivery.Recoverer).
type DeliveryRecoverer interface {
	Recover(ctx context.Context, workspaceID, kind, webhookID string, since, until time.Time) (int, error)
}

type testView struct {
	DeliveryID     string  `json:"delivery_id"`
	Status         string  `json:"status"`
	ResponseStatus *int    `json:"response_status"`
	DurationMS     int64   `json:"duration_ms"`
	Error          *string `json:"error"`
}

// TestWebhookHandler serves POST .../{outbound,support}-webhooks/{id}/test
// (contract section 14, admin): one webhook.test delivery now, answered
// 200 with the receiver's result (a failed attempt is a result, not an
// error). A body, if any, is ignored.
func TestWebhookHandler(kind webhooks.Kind, m WebhookManager, t WebhookTester) http.Handler {
	return byID(kind, m, func(w http.ResponseWriter, r *http.Request, _ workspaces.Principal, wh webhooks.Webhook) {
		a, err := t.Test(r.Context(), wh)
		if err != nil {
			Error(w, r, err)
			return
		}
		v := testView{DeliveryID: a.Delivery.ID, Status: a.Status, DurationMS: a.DurationMS}
		if a.ResponseStatus != 0 {
			v.ResponseStatus = &a.ResponseStatus
		}
		if a.Error != "" {
			v.Error = &a.Error
		}
		JSON(w, http.StatusOK, dataBody{v})
	})
}

// RecoverDeliveriesHandler serves POST .../{outbound,support}-webhooks/
// {id}/recover (contract section 14, admin): {"since", "until"} queues the
// webhook's failed deliveries of that window again, 202 with how many. An
// inactive webhook is refused (422 on active): its deliveries would be
// dropped.
func RecoverDeliveriesHandler(kind webhooks.Kind, m WebhookManager, rec DeliveryRecoverer, now chat.Clock) http.Handler {
	return byID(kind, m, func(w http.ResponseWriter, r *http.Request, _ workspaces.Principal, wh webhooks.Webhook) {
		obj, _, err := ReadObject(r)
		if err != nil {
			Error(w, r, err)
			return
		}
		since, until, err := delivery.RecoverWindow(obj, now())
		if err != nil {
			Error(w, r, err)
			return
		}
		if !wh.Active {
			var v chat.Validation
			v.Add("active", "The webhook is inactive: re-enable it (active: true) before recovering its deliveries.")
			Error(w, r, v.Err())
			return
		}
		n, err := rec.Recover(r.Context(), wh.WorkspaceID, string(kind), wh.ID, since, until)
		if err != nil {
			Error(w, r, err)
			return
		}
		JSON(w, http.StatusAccepted, dataBody{struct {
			Queued int `json:"queued"`
		}{n}})
	})
}

// rateLimit is a webhook's rate_limit as views show it: null for none.
func rateLimit(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}
