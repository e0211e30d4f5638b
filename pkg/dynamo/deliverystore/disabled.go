package deliverystore

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/events"
)

// Audit entries the service itself writes (contract section 14).
const (
	ActionDisabled = events.WebhookDisabled
	// ActorSystem is the actor type of an entry no user caused; its actor
	// id names the part of the service, ActorDelivery the delivery
	// function.
	ActorSystem   = "system"
	ActorDelivery = "delivery"
	// attrReason is the audit item's reason for a webhook.disabled entry.
	attrReason = "reason"
)

// disabledAudit is the audit entry of w disabled for reason at now, put
// in the transaction that disables it, so that the stream reports it
// (ChangeFromImage) and webhook.disabled is derived from it: the event is
// recorded in the same write as the change.
func (s *Store) disabledAudit(w delivery.Webhook, reason string, now time.Time) types.TransactWriteItem {
	ev := chat.AuditEvent{ID: events.DeriveID(now, ActionDisabled, w.ID, reason), WorkspaceID: w.WorkspaceID,
		ActorType: ActorSystem, ActorID: ActorDelivery, Action: ActionDisabled, TargetType: chat.WebhookTargetType(w.Kind),
		TargetID: w.ID, Changes: []string{"active", "disabled_reason"}, CreatedAt: now, ExpiresAt: now.Add(chat.AuditRetention)}
	put := dynamo.AuditPut(s.Name, ev)
	put.Put.Item[attrReason] = dynamo.Str(reason)
	return put
}
