package dynamo

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
)

// AuditItem is one audit event: pk AUDIT#<ws>, sk EVT#<ulid>, so that a
// query newest first needs no index. It is kept out of the workspace's own
// partition, which the inbound path reads up to its channels. The TTL
// deletes it some time after expires_at; reads skip it from expires_at on.
type AuditItem struct {
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

// AuditPK is the partition of workspace ws's audit trail.
func AuditPK(ws string) string { return "AUDIT#" + ws }
func auditSK(id string) string { return "EVT#" + id }

// AuditPut is the write of audit event ev in table: one Put, for a
// transaction or alone.
func AuditPut(table string, ev chat.AuditEvent) types.TransactWriteItem {
	changes := ev.Changes
	if changes == nil {
		changes = []string{}
	}
	it := AuditItem{PK: AuditPK(ev.WorkspaceID), SK: auditSK(ev.ID), ID: ev.ID, WorkspaceID: ev.WorkspaceID,
		ActorType: ev.ActorType, ActorID: ev.ActorID, Action: ev.Action, TargetType: ev.TargetType, TargetID: ev.TargetID,
		Changes: changes, CreatedAt: ev.CreatedAt, ExpiresAt: ev.ExpiresAt, TTL: Epoch(ev.ExpiresAt)}
	return Put(table, it, "", nil)
}
