// Package requestlog serves an inbound webhook's request log to the
// workspace API (ListInboundRequestsFunction, contract section 7). It is
// apart from package inboundapi, the webhook's own requests, so that the
// inbound post and the webhook's edits do not link the list's paging.
package requestlog

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/dynamo/inboundstore"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// Store lists request log records.
type Store interface {
	// InboundWebhookOf checks that webhook belongs to workspace ws.
	// Errors: ENotFound.
	InboundWebhookOf(ctx context.Context, ws, webhook string) error
	RequestLogs(ctx context.Context, ws, webhook, after string, limit int) (chat.Page[chat.RequestLog], error)
}

type requestLogView struct {
	ID             string  `json:"id"`
	WorkspaceID    string  `json:"workspace_id"`
	WebhookID      string  `json:"webhook_id"`
	ReceivedAt     string  `json:"received_at"`
	Status         int     `json:"status"`
	Outcome        string  `json:"outcome"`
	ErrorCode      *string `json:"error_code"`
	MessageID      *string `json:"message_id"`
	IdempotencyKey *string `json:"idempotency_key"`
	AuthScheme     string  `json:"auth_scheme"`
	SourceIP       string  `json:"source_ip"`
	UserAgent      string  `json:"user_agent"`
	BodyBytes      int     `json:"body_bytes"`
	DurationMS     int64   `json:"duration_ms"`
}

// Handler serves GET
// /api/v1/workspaces/{workspace_id}/inbound-webhooks/{webhook}/requests
// (contract section 7): newest first, paginated like the lists.
func Handler(auth httpapi.Authorizer, store Store, codec *cursor.Codec) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		webhook := r.PathValue("webhook")
		httpapi.ServePage(w, r, codec, "inbound-requests:"+p.WorkspaceID+":"+webhook,
			func(ctx context.Context, after string, limit int) (chat.Page[chat.RequestLog], error) {
				if !chat.ValidID(webhook) {
					return chat.Page[chat.RequestLog]{}, chat.Errorf(chat.ENotFound, "The webhook does not exist.")
				}
				if err := store.InboundWebhookOf(ctx, p.WorkspaceID, webhook); err != nil {
					return chat.Page[chat.RequestLog]{}, err
				}
				return store.RequestLogs(ctx, p.WorkspaceID, webhook, after, limit)
			},
			func(l chat.RequestLog) requestLogView {
				return requestLogView{ID: l.ID, WorkspaceID: l.WorkspaceID, WebhookID: l.WebhookID,
					ReceivedAt: chat.FormatTime(l.ReceivedAt), Status: l.Status, Outcome: l.Outcome,
					ErrorCode: httpapi.Nullable(l.ErrorCode), MessageID: httpapi.Nullable(l.MessageID), IdempotencyKey: httpapi.Nullable(l.IdempotencyKey),
					AuthScheme: l.AuthScheme, SourceIP: l.SourceIP, UserAgent: l.UserAgent, BodyBytes: l.BodyBytes, DurationMS: l.DurationMS}
			})
	})
}

// RequestLog builds ListInboundRequestsFunction.
func RequestLog(a *app.App) (http.Handler, error) {
	codec, err := cursor.Of(a.CursorKey)
	if err != nil {
		return nil, err
	}
	return Handler(a.Authenticator(), inboundstore.New(a.DB, a.Table), codec), nil
}
