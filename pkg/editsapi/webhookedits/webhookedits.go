// Package webhookedits holds an inbound webhook's edit and delete
// functions (contract section 13), apart from inboundapi so that the post
// function does not link editing.
package webhookedits

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/edits"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/inboundstore"
	"github.com/chatbridge/chat/pkg/editsapi"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/inbound"
	"github.com/chatbridge/chat/pkg/inboundapi"
	"github.com/chatbridge/chat/pkg/messageview"
)

// WebhookChanger decides an inbound webhook's edits and deletions
// (inbound.Changes).
type WebhookChanger interface {
	Change(ctx context.Context, req inbound.Request, c inbound.Change) inbound.ChangeResult
}

// EditWebhookMessageHandler serves PATCH /webhooks/{webhook}/messages/{message_id}
// (contract section 13): the post's credential scheme, quota, request log
// and Idempotency-Key, with the X-RateLimit-* headers; 200 with the new
// revision's view (Idempotent-Replayed: true on a replay).
func EditWebhookMessageHandler(c WebhookChanger, now chat.Clock, m awsenv.MetricRecorder, view messageview.Renderer) http.Handler {
	return webhookChange(c, now, m, false, view)
}

// DeleteWebhookMessageHandler serves DELETE on the same path: 204.
func DeleteWebhookMessageHandler(c WebhookChanger, now chat.Clock, m awsenv.MetricRecorder) http.Handler {
	return webhookChange(c, now, m, true, messageview.Renderer{})
}

func webhookChange(c WebhookChanger, now chat.Clock, m awsenv.MetricRecorder, deleting bool, view messageview.Renderer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := inboundapi.ReadRequest(r, now)
		res := c.Change(r.Context(), req, inbound.Change{MessageID: r.PathValue("message_id"), Delete: deleting,
			IfMatch: editsapi.IfMatch(r)})
		inboundapi.WriteQuota(w, res.Quota)
		inboundapi.Record(r.Context(), m, res.Result)
		if res.Replayed {
			w.Header().Set(inboundapi.ReplayedHeader, "true")
		}
		switch {
		case res.Err != nil:
			httpapi.Error(w, r, res.Err)
		case deleting:
			editsapi.WriteDeleted(w)
		default:
			editsapi.WriteEdited(w, res.View, view)
		}
	})
}

// changes is the inbound webhooks' edits and deletions, with the webhook
// settings cache of a post (WEBHOOK_CACHE_TTL); an edit's answer carries
// the message's reactions with editor (editsapi.ReactingEditor).
func changes(a *app.App, editor *edits.Service) (*inbound.Changes, error) {
	ttl, err := app.WebhookCacheTTL()
	if err != nil {
		return nil, err
	}
	st := inboundstore.New(a.DB, a.Table)
	return &inbound.Changes{Service: inboundapi.Service(a, ttl), Editor: botEditor{editor}, Logs: st, Locator: st}, nil
}

// botEditor is the editor as an inbound webhook uses it: the actor is the
// webhook's bot.
type botEditor struct{ e *edits.Service }

func bot(wh chat.InboundWebhook, workspaceID string) edits.Actor {
	return edits.Actor{Type: chat.AuthorBot, ID: wh.ID, Name: wh.BotName, WorkspaceID: workspaceID}
}

func (b botEditor) EditAsWebhook(ctx context.Context, wh chat.InboundWebhook, workspaceID, channelID, messageID string, body edits.Body, ifMatch string) (chat.MessageView, error) {
	return b.e.Edit(ctx, bot(wh, workspaceID), channelID, messageID, body, ifMatch)
}

func (b botEditor) DeleteAsWebhook(ctx context.Context, wh chat.InboundWebhook, workspaceID, channelID, messageID string) error {
	return b.e.Delete(ctx, bot(wh, workspaceID), channelID, messageID)
}

// EditWebhookMessage builds EditWebhookMessageFunction.
func EditWebhookMessage(a *app.App) (http.Handler, error) {
	c, err := changes(a, editsapi.ReactingEditor(a))
	if err != nil {
		return nil, err
	}
	return EditWebhookMessageHandler(c, a.Now, a.Metrics, a.Renderer(0)), nil
}

// DeleteWebhookMessage builds DeleteWebhookMessageFunction.
func DeleteWebhookMessage(a *app.App) (http.Handler, error) {
	c, err := changes(a, editsapi.Editor(a))
	if err != nil {
		return nil, err
	}
	return DeleteWebhookMessageHandler(c, a.Now, a.Metrics), nil
}
