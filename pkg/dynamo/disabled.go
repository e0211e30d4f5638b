package dynamo

import (
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/webhooks"
)

// ChangeWebhookDisabled is the stream's report of a webhook the delivery
// function disabled: the audit item written in the same transaction.
const ChangeWebhookDisabled = "webhook_disabled"

// Audit entries the service itself writes (contract section 14).
const (
	ActionDisabled = "webhook.disabled"
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
	ev := webhooks.AuditEvent{ID: events.DeriveID(now, ActionDisabled, w.ID, reason), WorkspaceID: w.WorkspaceID,
		ActorType: ActorSystem, ActorID: ActorDelivery, Action: ActionDisabled, TargetType: webhooks.Kind(w.Kind).TargetType(),
		TargetID: w.ID, Changes: []string{"active", "disabled_reason"}, CreatedAt: now, ExpiresAt: now.Add(webhooks.AuditRetention)}
	put := s.auditPut(ev)
	put.Put.Item[attrReason] = str(reason)
	return put
}

// disabledChange reads a webhook.disabled audit entry's stream image.
func disabledChange(image map[string]types.AttributeValue) (Change, bool) {
	if getS(image, "action") != ActionDisabled {
		return Change{}, false
	}
	kind, _ := strings.CutSuffix(getS(image, "target_type"), "_webhook")
	at, err := time.Parse(time.RFC3339Nano, getS(image, "created_at"))
	if err != nil || getS(image, "target_id") == "" {
		return Change{}, false
	}
	return Change{Kind: ChangeWebhookDisabled, WorkspaceID: getS(image, "workspace_id"), At: at,
		Disabled: events.Disabled{WebhookID: getS(image, "target_id"), Kind: kind, Reason: getS(image, attrReason)}}, true
}
