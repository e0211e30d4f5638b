package webhooks

import (
	"context"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// Kind is a kind of webhook.
type Kind string

// The kinds of webhook.
const (
	Inbound  Kind = "inbound"
	Outbound Kind = "outbound"
	Support  Kind = "support"
)

// TargetType is the kind as an audit event's target type.
func (k Kind) TargetType() string { return chat.WebhookTargetType(string(k)) }

// Webhook is a webhook of any kind as management sees it. Inbound uses
// ChannelID, BotName, BotAvatarURL, SignatureRequired, Enabled and
// SecretHash; outbound uses Name, URL, Events and Active; support Name, URL
// and Active. Every kind has a SigningSecret (kept in clear: signing needs
// the key) and, after a rotation, the previous secrets until
// PreviousExpiresAt.
type Webhook struct {
	Kind        Kind
	ID          string
	WorkspaceID string

	ChannelID         string
	BotName           string
	BotAvatarURL      string
	SignatureRequired bool
	Enabled           bool

	Name   string
	URL    string
	Events []string
	Active bool
	// DisabledReason is why the delivery function disabled an outbound or
	// support webhook ("gone", "failing"); "" while active or when an
	// admin disabled it. Read only: management never writes it.
	DisabledReason string
	// RateLimit is the most deliveries a second (outbound, support); 0 is
	// none.
	RateLimit int

	SecretHash            string
	SigningSecret         string
	PreviousSecretHash    string
	PreviousSigningSecret string
	PreviousExpiresAt     time.Time

	CreatedAt time.Time
	UpdatedAt time.Time
}

// Secrets are the clear secrets a create or a rotation shows once.
type Secrets struct {
	// Secret is the inbound static secret; "" for other kinds.
	Secret        string
	SigningSecret string
	// PreviousExpiresAt is when the replaced secrets stop working (rotation).
	PreviousExpiresAt time.Time
}

// Audit actions.
const (
	ActionCreated = "webhook.created"
	ActionUpdated = "webhook.updated"
	ActionDeleted = "webhook.deleted"
	ActionRotated = "webhook.secret_rotated"
)

// RotationWindow is how long a replaced secret keeps working.
const RotationWindow = 24 * time.Hour

// AuditEvent is one entry of a workspace's audit trail (chat.AuditEvent).
type AuditEvent = chat.AuditEvent

// Store is the storage management needs. Each method is one call to the
// store in the common case.
type Store interface {
	// Load reads the API token stored under tokenHash and, when id is not
	// "", webhook id of kind. Either is nil when absent (a deleted webhook
	// is absent). Errors: EUnavailable.
	Load(ctx context.Context, tokenHash string, kind Kind, id string) (*workspaces.APIToken, *Webhook, error)
	// Get reads webhook id of kind; nil when absent. Errors: EUnavailable.
	Get(ctx context.Context, kind Kind, id string) (*Webhook, error)
	// Create stores w with ev. Errors: EValidation on channel_id when an
	// inbound webhook's channel is not one of its workspace; EConflict
	// when the id is taken; EUnavailable.
	Create(ctx context.Context, w Webhook, ev AuditEvent) error
	// Update stores next in place of old with ev, provided old is still
	// what is stored. Errors: EConflict when it changed or is gone;
	// EValidation on channel_id as Create; EUnavailable.
	Update(ctx context.Context, old, next Webhook, ev AuditEvent) error
	// Delete removes old with ev, provided old is still what is stored; an
	// inbound webhook leaves a tombstone so its request log stays readable.
	// Errors: EConflict, EUnavailable.
	Delete(ctx context.Context, old Webhook, ev AuditEvent, now time.Time) error
	// InboundWebhooks lists a workspace's inbound webhooks oldest first.
	InboundWebhooks(ctx context.Context, workspaceID, after string, limit int) (chat.Page[Webhook], error)
	// AuditEvents lists a workspace's audit events newest first, none
	// expired at now.
	AuditEvents(ctx context.Context, workspaceID, after string, limit int, now time.Time) (chat.Page[AuditEvent], error)
}

// IDGen makes identifiers (chat.IDs).
type IDGen interface {
	New(t time.Time) string
}
