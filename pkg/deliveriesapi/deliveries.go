package deliveriesapi

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// DeliveryLog lists a webhook's deliveries, newest first.
type DeliveryLog interface {
	ListDeliveries(ctx context.Context, workspaceID, webhookID, after string, limit int) (chat.Page[delivery.Record], error)
	// EventWebhookOf checks that webhook id of kind exists in workspace.
	// Errors: ENotFound.
	EventWebhookOf(ctx context.Context, workspaceID, kind, id string) error
}

// Redeliverer queues a new attempt of a delivery (delivery.Redeliverer).
type Redeliverer interface {
	Redeliver(ctx context.Context, workspaceID, kind, webhookID, deliveryID string) error
}

// deliveryView is a delivery log item (contract section 11): never a
// secret or a signature.
type deliveryView struct {
	ID             string  `json:"id"`
	EventID        string  `json:"event_id"`
	EventType      string  `json:"event_type"`
	Status         string  `json:"status"`
	Attempts       int     `json:"attempts"`
	LastAttemptAt  *string `json:"last_attempt_at"`
	NextAttemptAt  *string `json:"next_attempt_at"`
	ResponseStatus *int    `json:"response_status"`
	Error          *string `json:"error"`
	DurationMS     *int64  `json:"duration_ms"`
	CreatedAt      string  `json:"created_at"`
}

func deliveryViewOf(d delivery.Record) deliveryView {
	v := deliveryView{ID: d.ID, EventID: d.EventID, EventType: d.EventType, Status: d.Status, Attempts: d.Attempts,
		CreatedAt: chat.FormatTime(d.CreatedAt)}
	if !d.LastAttemptAt.IsZero() {
		s := chat.FormatTime(d.LastAttemptAt)
		v.LastAttemptAt = &s
		v.DurationMS = &d.DurationMS
	}
	if !d.NextAttemptAt.IsZero() {
		s := chat.FormatTime(d.NextAttemptAt)
		v.NextAttemptAt = &s
	}
	if d.ResponseStatus != 0 {
		v.ResponseStatus = &d.ResponseStatus
	}
	if d.Error != "" {
		v.Error = &d.Error
	}
	return v
}

// DeliveriesHandler serves GET .../outbound-webhooks/{id}/deliveries and
// .../support-webhooks/{id}/deliveries (contract section 11) for kind:
// the webhook's delivery log, newest first. A webhook id that is not one
// of kind in the workspace gets 404; a deleted webhook's log stays
// readable while it holds deliveries. The check costs no call on a page
// with deliveries (they name their kind, and their key the workspace), nor
// past the first page (its signed cursor); an empty first page reads the
// webhook.
func DeliveriesHandler(auth httpapi.Authorizer, kind string, log DeliveryLog, codec *cursor.Codec) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		id := r.PathValue("id")
		if !chat.ValidID(id) {
			httpapi.Error(w, r, errDeliveryNotFound())
			return
		}
		httpapi.ServePage(w, r, codec, "deliveries:"+kind+":"+p.WorkspaceID+":"+id,
			func(ctx context.Context, after string, limit int) (chat.Page[delivery.Record], error) {
				page, err := log.ListDeliveries(ctx, p.WorkspaceID, id, after, limit)
				if err == nil {
					err = checkDeliveryLog(ctx, log, p.WorkspaceID, kind, id, after, page)
				}
				return page, err
			},
			deliveryViewOf)
	})
}

// checkDeliveryLog answers 404 unless page is the log of a webhook of kind
// in workspace ws (see DeliveriesHandler).
func checkDeliveryLog(ctx context.Context, log DeliveryLog, ws, kind, id, after string, page chat.Page[delivery.Record]) error {
	switch {
	case len(page.Items) > 0:
		if page.Items[0].Kind != kind {
			return errDeliveryNotFound()
		}
		return nil
	case after != "":
		return nil
	}
	if err := log.EventWebhookOf(ctx, ws, kind, id); err != nil {
		if chat.IsCode(err, chat.ENotFound) {
			return errDeliveryNotFound()
		}
		return err
	}
	return nil
}

// errDeliveryNotFound is the 404 of the delivery log and redeliver routes,
// worded like every other 404: it echoes no value of the path.
func errDeliveryNotFound() error {
	return chat.Errorf(chat.ENotFound, "The requested resource was not found.")
}

// RedeliverHandler serves POST .../{kind}-webhooks/{id}/deliveries/
// {delivery_id}/redeliver (contract section 11, admin): 202 once a new
// attempt of the delivery is queued. A body, if any, is ignored.
func RedeliverHandler(auth httpapi.Authorizer, kind string, svc Redeliverer) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		if !p.IsAdmin() {
			httpapi.Error(w, r, workspaces.ErrForbidden())
			return
		}
		if err := svc.Redeliver(r.Context(), p.WorkspaceID, kind, r.PathValue("id"), r.PathValue("delivery_id")); err != nil {
			if chat.IsCode(err, chat.ENotFound) {
				// Like every other 404: the contract's sentence, never
				// the store's, which names the path's values.
				err = errDeliveryNotFound()
			}
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, http.StatusAccepted, struct {
			Data struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"data"`
		}{Data: struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}{ID: r.PathValue("delivery_id"), Status: delivery.StatusPending}})
	})
}
