package deliveriesapi

import (
	"context"
	"net/http"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// RecoverWebhooks reads the webhook a recovery names, through the delivery
// store (as the delivery log checks it).
type RecoverWebhooks interface {
	// EventWebhookActive reports whether webhook id of kind in workspace
	// is active. Errors: ENotFound when there is none; EUnavailable.
	EventWebhookActive(ctx context.Context, workspaceID, kind, id string) (bool, error)
}

// DeliveryRecoverer queues a webhook's failed deliveries of a window again
// (delivery.Recoverer).
type DeliveryRecoverer interface {
	Recover(ctx context.Context, workspaceID, kind, webhookID string, since, until time.Time) (int, error)
}

// RecoverDeliveriesHandler serves POST .../{outbound,support}-webhooks/
// {id}/recover (contract section 14, admin): {"since", "until"} queues the
// webhook's failed deliveries of that window again, 202 with how many. An
// inactive webhook is refused (422 on active): its deliveries would be
// dropped. The decisions, in order: the credential (401, 403 for another
// workspace), an admin (403), the webhook of kind in the workspace (404),
// the body and its window (422), the webhook active (422).
func RecoverDeliveriesHandler(auth httpapi.Authorizer, kind string, hooks RecoverWebhooks, rec DeliveryRecoverer, now chat.Clock) http.Handler {
	lookup := func(ctx context.Context, ws, id string) (bool, error) {
		return hooks.EventWebhookActive(ctx, ws, kind, id)
	}
	return httpapi.RequireAdminWebhook(auth, lookup, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal, id string, active bool) {
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
		if !active {
			var v chat.Validation
			v.Add("active", "The webhook is inactive: re-enable it (active: true) before recovering its deliveries.")
			httpapi.Error(w, r, v.Err())
			return
		}
		n, err := rec.Recover(r.Context(), p.WorkspaceID, kind, id, since, until)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, http.StatusAccepted, struct {
			Data struct {
				Queued int `json:"queued"`
			} `json:"data"`
		}{Data: struct {
			Queued int `json:"queued"`
		}{n}})
	})
}

// errWebhookNotFound is the 404 of a webhook management route, which the
// recovery's was: it echoes no value of the path.
