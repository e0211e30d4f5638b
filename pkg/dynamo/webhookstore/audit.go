package webhookstore

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/webhooks"
)

// auditItem is one audit event: pk AUDIT#<ws>, sk EVT#<ulid>, so that a
// query newest first needs no index. It is kept out of the workspace's own
// partition, which the inbound path reads up to its channels. The TTL
// deletes it some time after expires_at; reads skip it from expires_at on.
type auditItem struct {
	PK          string    `dynamodbav:"pk"`
	SK          string    `dynamodbav:"sk"`
	ID          string    `dynamodbav:"id"`
	WorkspaceID string    `dynamodbav:"workspace_id"`
	ActorType   string    `dynamodbav:"actor_type"`
	ActorID     string    `dynamodbav:"actor_id"`
	Action      string    `dynamodbav:"action"`
	TargetType  string    `dynamodbav:"target_type"`
	TargetID    string    `dynamodbav:"target_id"`
	Changes     []string  `dynamodbav:"changes"`
	CreatedAt   time.Time `dynamodbav:"created_at"`
	ExpiresAt   time.Time `dynamodbav:"expires_at"`
	TTL         int64     `dynamodbav:"ttl"`
}

func auditPK(ws string) string { return "AUDIT#" + ws }
func auditSK(id string) string { return "EVT#" + id }

func (s *Store) AuditPut(ev webhooks.AuditEvent) types.TransactWriteItem {
	changes := ev.Changes
	if changes == nil {
		changes = []string{}
	}
	it := auditItem{PK: auditPK(ev.WorkspaceID), SK: auditSK(ev.ID), ID: ev.ID, WorkspaceID: ev.WorkspaceID,
		ActorType: ev.ActorType, ActorID: ev.ActorID, Action: ev.Action, TargetType: ev.TargetType, TargetID: ev.TargetID,
		Changes: changes, CreatedAt: ev.CreatedAt, ExpiresAt: ev.ExpiresAt, TTL: dynamo.Epoch(ev.ExpiresAt)}
	return types.TransactWriteItem{Put: &types.Put{TableName: &s.Name, Item: MarshalItem(it, nil)}}
}

// AuditEvents implements webhooks.Store with one Query, newest first. Event
// ids grow with time, so once one has expired every later one has too: the
// page ends there, without a cursor.
func (s *Store) AuditEvents(ctx context.Context, ws, after string, limit int, now time.Time) (chat.Page[webhooks.AuditEvent], error) {
	q := dynamo.ListQuery{Op: "list audit events", PK: auditPK(ws), Prefix: "EVT#"}
	page, err := dynamo.ListPage(ctx, s.Table, q, after, limit, func(it auditItem) webhooks.AuditEvent {
		return webhooks.AuditEvent{ID: it.ID, WorkspaceID: it.WorkspaceID, ActorType: it.ActorType,
			ActorID: it.ActorID, Action: it.Action, TargetType: it.TargetType, TargetID: it.TargetID, Changes: it.Changes,
			CreatedAt: it.CreatedAt, ExpiresAt: it.ExpiresAt}
	})
	if err != nil {
		return chat.Page[webhooks.AuditEvent]{}, err
	}
	for i, ev := range page.Items {
		if !now.Before(ev.ExpiresAt) {
			page.Items, page.After, page.Next = page.Items[:i], page.After[:i], ""
			break
		}
	}
	return page, nil
}
