package inboundapi

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/editsapi"
	"github.com/chatbridge/chat/pkg/emf"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/inbound"
	"github.com/chatbridge/chat/pkg/messageview"
)

// WebhookChanger decides an inbound webhook's edits and deletions
// (inbound.Changes).
type WebhookChanger interface {
	Change(ctx context.Context, req inbound.Request, c inbound.Change) inbound.ChangeResult
}

// EditWebhookMessageHandler serves PATCH /webhooks/{webhook}/messages/{message_id}
// (contract section 13): the post's credential scheme, quota and request
// log, with the X-RateLimit-* headers; 200 with the new revision's view.
func EditWebhookMessageHandler(c WebhookChanger, now chat.Clock, m emf.Recorder) http.Handler {
	return webhookChange(c, now, m, false)
}

// DeleteWebhookMessageHandler serves DELETE on the same path: 204.
func DeleteWebhookMessageHandler(c WebhookChanger, now chat.Clock, m emf.Recorder) http.Handler {
	return webhookChange(c, now, m, true)
}

func webhookChange(c WebhookChanger, now chat.Clock, m emf.Recorder, deleting bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := readInbound(r, now)
		res := c.Change(r.Context(), req, inbound.Change{MessageID: r.PathValue("message_id"), Delete: deleting,
			IfMatch: editsapi.IfMatch(r)})
		writeQuota(w, res.Quota)
		recordInbound(r.Context(), m, res.Result)
		switch {
		case res.Err != nil:
			httpapi.Error(w, r, res.Err)
		case deleting:
			editsapi.WriteDeleted(w)
		default:
			messageview.WriteEdited(w, res.View)
		}
	})
}
