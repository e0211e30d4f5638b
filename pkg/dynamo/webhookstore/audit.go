package webhookstore

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/webhooks"
)

// AuditPut is the write of ev (dynamo.AuditPut).
func (s *Store) AuditPut(ev webhooks.AuditEvent) types.TransactWriteItem {
	return dynamo.AuditPut(s.Name, ev)
}

// AuditEvents implements webhooks.Store with one Query, newest first. Event
// ids grow with time, so once one has expired every later one has too: the
// page ends there, without a cursor.
func (s *Store) AuditEvents(ctx context.Context, ws, after string, limit int, now time.Time) (chat.Page[webhooks.AuditEvent], error) {
	q := dynamo.ListQuery{Op: "list audit events", PK: dynamo.AuditPK(ws), Prefix: "EVT#"}
	page, err := dynamo.ListPage(ctx, s.Table, q, after, limit, func(it dynamo.AuditItem) webhooks.AuditEvent {
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
