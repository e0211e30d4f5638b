package webhookstore

import (
	"context"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/workspaces"
)

var (
	_ workspaces.WebhookStore = (*Store)(nil)
)

// OutboundWebhooks implements workspaces.WebhookStore with one Query
// (listPage), oldest first.
func (s *Store) OutboundWebhooks(ctx context.Context, ws, after string, limit int) (chat.Page[chat.OutboundWebhook], error) {
	q := dynamo.ListQuery{Op: "list outbound webhooks", PK: dynamo.WsPK(ws), Prefix: "OWH#", Forward: true}
	return dynamo.ListPage(ctx, s.Table, q, after, limit, func(it dynamo.OutboundRead) chat.OutboundWebhook {
		return chat.OutboundWebhook{ID: it.ID, WorkspaceID: it.WorkspaceID, Name: it.Name, URL: it.URL,
			Events: it.Events, Active: it.Active, DisabledReason: it.Reason(it.Active), RateLimit: it.RateLimit, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt}
	})
}

// SupportWebhooks implements workspaces.WebhookStore with one Query
// (listPage), oldest first.
func (s *Store) SupportWebhooks(ctx context.Context, ws, after string, limit int) (chat.Page[chat.SupportWebhook], error) {
	q := dynamo.ListQuery{Op: "list support webhooks", PK: dynamo.WsPK(ws), Prefix: "SWH#", Forward: true}
	return dynamo.ListPage(ctx, s.Table, q, after, limit, func(it dynamo.SupportRead) chat.SupportWebhook {
		return chat.SupportWebhook{ID: it.ID, WorkspaceID: it.WorkspaceID, Name: it.Name, URL: it.URL,
			Active: it.Active, DisabledReason: it.Reason(it.Active), RateLimit: it.RateLimit, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt}
	})
}
