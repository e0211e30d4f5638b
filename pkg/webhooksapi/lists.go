package webhooksapi

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

type outboundView struct {
	ID          string   `json:"id"`
	WorkspaceID string   `json:"workspace_id"`
	Name        string   `json:"name"`
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Active      bool     `json:"active"`
	// DisabledReason is "gone" or "failing" when the delivery function
	// disabled the webhook, else null.
	DisabledReason *string `json:"disabled_reason"`
	RateLimit      *int    `json:"rate_limit"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
}

type supportView struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Name        string `json:"name"`
	URL         string `json:"url"`
	Active      bool   `json:"active"`
	// DisabledReason is as outboundView's.
	DisabledReason *string `json:"disabled_reason"`
	RateLimit      *int    `json:"rate_limit"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
}

// OutboundWebhooksHandler serves GET
// /api/v1/workspaces/{workspace_id}/outbound-webhooks (contract section 3).
// No secret is ever part of an item.
func OutboundWebhooksHandler(auth httpapi.Authorizer, store workspaces.WebhookStore, codec *cursor.Codec) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		httpapi.ServePage(w, r, codec, "outbound-webhooks:"+p.WorkspaceID,
			func(ctx context.Context, after string, limit int) (chat.Page[chat.OutboundWebhook], error) {
				return store.OutboundWebhooks(ctx, p.WorkspaceID, after, limit)
			},
			func(o chat.OutboundWebhook) outboundView {
				events := o.Events
				if events == nil {
					events = []string{}
				}
				return outboundView{ID: o.ID, WorkspaceID: o.WorkspaceID, Name: o.Name, URL: o.URL, Events: events,
					Active: o.Active, DisabledReason: disabledReason(o.Active, o.DisabledReason), RateLimit: rateLimit(o.RateLimit), CreatedAt: chat.FormatTime(o.CreatedAt), UpdatedAt: chat.FormatTime(o.UpdatedAt)}
			})
	})
}

// SupportWebhooksHandler serves GET
// /api/v1/workspaces/{workspace_id}/support-webhooks (contract section 3).
func SupportWebhooksHandler(auth httpapi.Authorizer, store workspaces.WebhookStore, codec *cursor.Codec) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		httpapi.ServePage(w, r, codec, "support-webhooks:"+p.WorkspaceID,
			func(ctx context.Context, after string, limit int) (chat.Page[chat.SupportWebhook], error) {
				return store.SupportWebhooks(ctx, p.WorkspaceID, after, limit)
			},
			func(s chat.SupportWebhook) supportView {
				return supportView{ID: s.ID, WorkspaceID: s.WorkspaceID, Name: s.Name, URL: s.URL,
					Active: s.Active, DisabledReason: disabledReason(s.Active, s.DisabledReason), RateLimit: rateLimit(s.RateLimit), CreatedAt: chat.FormatTime(s.CreatedAt), UpdatedAt: chat.FormatTime(s.UpdatedAt)}
			})
	})
}

// rateLimit is a webhook's rate_limit as views show it: null for none.
func rateLimit(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}
