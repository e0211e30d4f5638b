package webhooksapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/signature"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// WebhookManager manages webhooks (pkg/webhooks.Service).
type WebhookManager interface {
	Authorize(ctx context.Context, authorization, workspaceID string, kind webhooks.Kind, id string) (workspaces.Principal, webhooks.Webhook, error)
	Create(ctx context.Context, p workspaces.Principal, kind webhooks.Kind, obj httpapi.Object) (webhooks.Webhook, webhooks.Secrets, error)
	Change(ctx context.Context, p workspaces.Principal, old webhooks.Webhook, obj httpapi.Object) (webhooks.Webhook, error)
	Rotate(ctx context.Context, p workspaces.Principal, old webhooks.Webhook) (webhooks.Webhook, webhooks.Secrets, error)
	Delete(ctx context.Context, p workspaces.Principal, old webhooks.Webhook) error
	AuditEvents(ctx context.Context, p workspaces.Principal, after string, limit int) (chat.Page[webhooks.AuditEvent], error)
}

// InboundWebhookLister lists a workspace's inbound webhooks oldest first.
type InboundWebhookLister interface {
	InboundWebhooks(ctx context.Context, workspaceID, after string, limit int) (chat.Page[webhooks.Webhook], error)
}

type inboundView struct {
	ID                string  `json:"id"`
	WorkspaceID       string  `json:"workspace_id"`
	ChannelID         string  `json:"channel_id"`
	BotName           string  `json:"bot_name"`
	BotAvatarURL      *string `json:"bot_avatar_url"`
	SignatureRequired bool    `json:"signature_required"`
	Enabled           bool    `json:"enabled"`
	URL               string  `json:"url"`
	CreatedAt         string  `json:"created_at"`
	UpdatedAt         string  `json:"updated_at"`
}

// webhookView is the public view of w: never a secret.
func webhookView(w webhooks.Webhook) any {
	switch w.Kind {
	case webhooks.Inbound:
		return inboundView{ID: w.ID, WorkspaceID: w.WorkspaceID, ChannelID: w.ChannelID, BotName: w.BotName,
			BotAvatarURL: httpapi.Nullable(w.BotAvatarURL), SignatureRequired: w.SignatureRequired, Enabled: w.Enabled,
			URL: "/webhooks/" + w.ID + "/messages", CreatedAt: chat.FormatTime(w.CreatedAt), UpdatedAt: chat.FormatTime(w.UpdatedAt)}
	case webhooks.Outbound:
		events := w.Events
		if events == nil {
			events = []string{}
		}
		return outboundView{ID: w.ID, WorkspaceID: w.WorkspaceID, Name: w.Name, URL: w.URL, Events: events,
			Active: w.Active, DisabledReason: disabledReason(w.Active, w.DisabledReason), RateLimit: rateLimit(w.RateLimit), CreatedAt: chat.FormatTime(w.CreatedAt), UpdatedAt: chat.FormatTime(w.UpdatedAt)}
	default:
		return supportView{ID: w.ID, WorkspaceID: w.WorkspaceID, Name: w.Name, URL: w.URL,
			Active: w.Active, DisabledReason: disabledReason(w.Active, w.DisabledReason), RateLimit: rateLimit(w.RateLimit), CreatedAt: chat.FormatTime(w.CreatedAt), UpdatedAt: chat.FormatTime(w.UpdatedAt)}
	}
}

// disabledReason is the disabled_reason of a view: why the delivery
// function disabled the webhook ("gone", "failing"), null while it is
// active or when an admin disabled it.
func disabledReason(active bool, reason string) *string {
	if active {
		return nil
	}
	return httpapi.Nullable(reason)
}

// createdView is the create response: the view plus the secrets, shown
// this once.
func createdView(w webhooks.Webhook, sec webhooks.Secrets) any {
	switch v := webhookView(w).(type) {
	case inboundView:
		return struct {
			inboundView
			Secret        string `json:"secret"`
			SigningSecret string `json:"signing_secret"`
		}{v, sec.Secret, sec.SigningSecret}
	case outboundView:
		return struct {
			outboundView
			SigningSecret         string `json:"signing_secret"`
			SigningSecretStandard string `json:"signing_secret_standard"`
		}{v, sec.SigningSecret, signature.StandardSecret([]byte(sec.SigningSecret))}
	default:
		return struct {
			supportView
			SigningSecret         string `json:"signing_secret"`
			SigningSecretStandard string `json:"signing_secret_standard"`
		}{v.(supportView), sec.SigningSecret, signature.StandardSecret([]byte(sec.SigningSecret))}
	}
}

type rotatedView struct {
	ID                      string  `json:"id"`
	Secret                  *string `json:"secret,omitempty"`
	SigningSecret           string  `json:"signing_secret"`
	SigningSecretStandard   *string `json:"signing_secret_standard,omitempty"`
	PreviousSecretExpiresAt string  `json:"previous_secret_expires_at"`
}

type dataBody struct {
	Data any `json:"data"`
}

func authorization(r *http.Request) string {
	// As RequireWorkspace: a repeated header makes the value malformed.
	return strings.Join(r.Header.Values("Authorization"), ",")
}

// CreateWebhookHandler serves POST .../{inbound,outbound,support}-webhooks
// (contract section 10, admin): 201 with the webhook and its secrets.
func CreateWebhookHandler(kind webhooks.Kind, auth httpapi.Authorizer, m WebhookManager) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		if err := workspaces.RequireAdmin(p); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		obj, _, err := httpapi.ReadObject(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		wh, sec, err := m.Create(r.Context(), p, kind, obj)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		httpapi.JSON(w, http.StatusCreated, dataBody{createdView(wh, sec)})
	})
}

// ByID resolves the admin and the webhook of the path, then runs h.
func ByID(kind webhooks.Kind, m WebhookManager, h func(w http.ResponseWriter, r *http.Request, p workspaces.Principal, old webhooks.Webhook)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if kind == webhooks.Inbound {
			id = r.PathValue("webhook")
		}
		p, old, err := m.Authorize(r.Context(), authorization(r), r.PathValue("workspace_id"), kind, id)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		h(w, r, p, old)
	})
}

// ChangeWebhookHandler serves PATCH .../{kind}-webhooks/{id} (admin): a
// partial update, 200 with the webhook.
func ChangeWebhookHandler(kind webhooks.Kind, m WebhookManager) http.Handler {
	return ByID(kind, m, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal, old webhooks.Webhook) {
		obj, _, err := httpapi.ReadObject(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		wh, err := m.Change(r.Context(), p, old, obj)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, http.StatusOK, dataBody{webhookView(wh)})
	})
}

// DeleteWebhookHandler serves DELETE .../{kind}-webhooks/{id} (admin): 204.
func DeleteWebhookHandler(kind webhooks.Kind, m WebhookManager) http.Handler {
	return ByID(kind, m, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal, old webhooks.Webhook) {
		if err := m.Delete(r.Context(), p, old); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// RotateWebhookHandler serves POST .../{kind}-webhooks/{id}/rotate-secret
// (admin): 200 with the new secrets, shown this once, and when the
// previous ones stop working.
func RotateWebhookHandler(kind webhooks.Kind, m WebhookManager) http.Handler {
	return ByID(kind, m, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal, old webhooks.Webhook) {
		wh, sec, err := m.Rotate(r.Context(), p, old)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		v := rotatedView{ID: wh.ID, SigningSecret: sec.SigningSecret, PreviousSecretExpiresAt: chat.FormatTime(sec.PreviousExpiresAt)}
		w.Header().Set("Cache-Control", "no-store")
		if kind == webhooks.Inbound {
			v.Secret = &sec.Secret
			httpapi.JSON(w, http.StatusOK, dataBody{v})
			return
		}
		std := signature.StandardSecret([]byte(sec.SigningSecret))
		v.SigningSecretStandard = &std
		// An outbound or support webhook's rotation also says whether it
		// still receives deliveries, and why not.
		httpapi.JSON(w, http.StatusOK, dataBody{struct {
			rotatedView
			Active         bool    `json:"active"`
			DisabledReason *string `json:"disabled_reason"`
		}{v, wh.Active, disabledReason(wh.Active, wh.DisabledReason)}})
	})
}

// InboundWebhooksHandler serves GET .../inbound-webhooks (every user of
// the workspace), oldest first, paginated like the other lists.
func InboundWebhooksHandler(auth httpapi.Authorizer, store InboundWebhookLister, codec *cursor.Codec) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		httpapi.ServePage(w, r, codec, "inbound-webhooks:"+p.WorkspaceID,
			func(ctx context.Context, after string, limit int) (chat.Page[webhooks.Webhook], error) {
				return store.InboundWebhooks(ctx, p.WorkspaceID, after, limit)
			},
			func(wh webhooks.Webhook) inboundView { return webhookView(wh).(inboundView) })
	})
}

type auditActor struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

type auditView struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	Action      string     `json:"action"`
	Actor       auditActor `json:"actor"`
	Target      auditActor `json:"target"`
	Changes     []string   `json:"changes"`
	CreatedAt   string     `json:"created_at"`
}

// AuditEventsHandler serves GET .../audit-events (admin), newest first.
func AuditEventsHandler(auth httpapi.Authorizer, m WebhookManager, codec *cursor.Codec) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		if err := workspaces.RequireAdmin(p); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.ServePage(w, r, codec, "audit-events:"+p.WorkspaceID,
			func(ctx context.Context, after string, limit int) (chat.Page[webhooks.AuditEvent], error) {
				return m.AuditEvents(ctx, p, after, limit)
			},
			func(e webhooks.AuditEvent) auditView {
				changes := e.Changes
				if changes == nil {
					changes = []string{}
				}
				return auditView{ID: e.ID, WorkspaceID: e.WorkspaceID, Action: e.Action,
					Actor: auditActor{e.ActorType, e.ActorID}, Target: auditActor{e.TargetType, e.TargetID},
					Changes: changes, CreatedAt: chat.FormatTime(e.CreatedAt)}
			})
	})
}
