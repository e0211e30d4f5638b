// Package integratorsapi serves the integrators' endpoints (contract
// section 14): test a webhook now, recover its failed deliveries.
package integratorsapi

import (
	"context"
	"net/http"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/webhooksapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// WebhookTester sends a webhook.test event to a webhook now, once
// (attempt.Tester through the app's conversion of the webhook).
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
func TestWebhookHandler(kind webhooks.Kind, m webhooksapi.WebhookManager, t WebhookTester) http.Handler {
	return webhooksapi.ByID(kind, m, func(w http.ResponseWriter, r *http.Request, _ workspaces.Principal, wh webhooks.Webhook) {
		a, err := t.Test(r.Context(), wh)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		v := testView{DeliveryID: a.Delivery.ID, Status: a.Status, DurationMS: a.DurationMS}
		if a.ResponseStatus != 0 {
			v.ResponseStatus = &a.ResponseStatus
		}
		if a.Error != "" {
			v.Error = &a.Error
		}
		httpapi.JSON(w, http.StatusOK, dataBody{v})
	})
}

// RecoverDeliveriesHandler serves POST .../{outbound,support}-webhooks/
// {id}/recover (contract section 14, admin): {"since", "until"} queues the
// webhook's failed deliveries of that window again, 202 with how many. An
// inactive webhook is refused (422 on active): its deliveries would be
// dropped.
func RecoverDeliveriesHandler(kind webhooks.Kind, m webhooksapi.WebhookManager, rec DeliveryRecoverer, now chat.Clock) http.Handler {
	return webhooksapi.ByID(kind, m, func(w http.ResponseWriter, r *http.Request, _ workspaces.Principal, wh webhooks.Webhook) {
		obj, _, err := httpapi.ReadObject(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		since, until, err := delivery.RecoverWindow(obj, now())
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if !wh.Active {
			var v chat.Validation
			v.Add("active", "The webhook is inactive: re-enable it (active: true) before recovering its deliveries.")
			httpapi.Error(w, r, v.Err())
			return
		}
		n, err := rec.Recover(r.Context(), wh.WorkspaceID, string(kind), wh.ID, since, until)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, http.StatusAccepted, dataBody{struct {
			Queued int `json:"queued"`
		}{n}})
	})
}

// dataBody is the contract's {"data": ...} envelope.
type dataBody struct {
	Data any `json:"data"`
}
