// Package integratorsapi serves the integrators' webhook test (contract
// section 14): one webhook.test delivery now, to the webhook as the
// delivery store reads it, so that the test functions link no webhook
// management. The recovery of failed deliveries is deliveriesapi's.
package integratorsapi

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// TestWebhooks reads the webhook a test names, through the delivery store
// (as the delivery function reads it).
type TestWebhooks interface {
	// EventWebhook returns webhook id of kind in workspace. Errors:
	// ENotFound when there is none; EUnavailable.
	EventWebhook(ctx context.Context, workspaceID, kind, id string) (delivery.Webhook, error)
}

// WebhookTester sends a webhook.test event to a webhook now, once
// (attempt.Tester).
type WebhookTester interface {
	Test(ctx context.Context, w delivery.Webhook) (delivery.Attempt, error)
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
// error). A body, if any, is ignored. The decisions, in order: the
// credential (401, 403 for another workspace), an admin (403), the
// webhook of kind in the workspace (404).
func TestWebhookHandler(auth httpapi.Authorizer, kind string, hooks TestWebhooks, t WebhookTester) http.Handler {
	lookup := func(ctx context.Context, ws, id string) (delivery.Webhook, error) {
		return hooks.EventWebhook(ctx, ws, kind, id)
	}
	return httpapi.RequireAdminWebhook(auth, lookup, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal, _ string, wh delivery.Webhook) {
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

// errWebhookNotFound is the 404 of a webhook management route, which the
// test's was: it echoes no value of the path.

// dataBody is the contract's {"data": ...} envelope.
type dataBody struct {
	Data any `json:"data"`
}
