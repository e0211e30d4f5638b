// Package integratorsapi serves the integrators' webhook test (contract
// section 14): one webhook.test delivery now. The recovery of failed
// deliveries is deliveriesapi's.
package integratorsapi

import (
	"context"
	"net/http"

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

// dataBody is the contract's {"data": ...} envelope.
type dataBody struct {
	Data any `json:"data"`
}
