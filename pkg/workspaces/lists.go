package workspaces

import (
	"context"

	"github.com/chatbridge/chat/pkg/chat"
)

// List paging bounds of the contract.
const (
	DefaultLimit = 25
	MaxLimit     = 100
)

// WebhookStore lists a workspace's webhooks in creation order. after is an
// opaque storage position from a previous page's Next ("" for the first
// page). Errors: EUnavailable when storage failed.
type WebhookStore interface {
	OutboundWebhooks(ctx context.Context, workspaceID, after string, limit int) (chat.Page[chat.OutboundWebhook], error)
	SupportWebhooks(ctx context.Context, workspaceID, after string, limit int) (chat.Page[chat.SupportWebhook], error)
}
