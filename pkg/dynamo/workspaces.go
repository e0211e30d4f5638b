package dynamo

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/workspaces"
)

var (
	_ workspaces.TokenStore   = (*Store)(nil)
	_ workspaces.WebhookStore = (*Store)(nil)
)

// APIToken implements workspaces.TokenStore with one GetItem.
func (s *Store) APIToken(ctx context.Context, hash string) (workspaces.APIToken, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: key(apiTokenPK(hash), metaSK)})
	if err != nil {
		return workspaces.APIToken{}, fail("get api token", err)
	}
	if out.Item == nil {
		return workspaces.APIToken{}, chat.Errorf(chat.ENotFound, "no such token")
	}
	return apiTokenOf(out.Item)
}

// apiTokenOf decodes an API token item.
func apiTokenOf(av map[string]types.AttributeValue) (workspaces.APIToken, error) {
	var it apiTokenItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return workspaces.APIToken{}, chat.Internal(err)
	}
	return workspaces.APIToken{Hash: strings.TrimPrefix(it.PK, "APITOKEN#"), WorkspaceID: it.WorkspaceID, UserID: it.UserID, Revoked: it.Revoked,
		Name: it.Name, Role: it.Role, PreferredLanguage: it.PreferredLanguage, Channels: it.Channels}, nil
}

// OutboundWebhooks implements workspaces.WebhookStore with one Query
// (listPage), oldest first.
func (s *Store) OutboundWebhooks(ctx context.Context, ws, after string, limit int) (chat.Page[chat.OutboundWebhook], error) {
	q := listQuery{op: "list outbound webhooks", pk: wsPK(ws), prefix: "OWH#", forward: true}
	return listPage(ctx, s, q, after, limit, func(it outboundItem) chat.OutboundWebhook {
		return chat.OutboundWebhook{ID: it.ID, WorkspaceID: it.WorkspaceID, Name: it.Name, URL: it.URL,
			Events: it.Events, Active: it.Active, RateLimit: it.RateLimit, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt}
	})
}

// SupportWebhooks implements workspaces.WebhookStore with one Query
// (listPage), oldest first.
func (s *Store) SupportWebhooks(ctx context.Context, ws, after string, limit int) (chat.Page[chat.SupportWebhook], error) {
	q := listQuery{op: "list support webhooks", pk: wsPK(ws), prefix: "SWH#", forward: true}
	return listPage(ctx, s, q, after, limit, func(it supportItem) chat.SupportWebhook {
		return chat.SupportWebhook{ID: it.ID, WorkspaceID: it.WorkspaceID, Name: it.Name, URL: it.URL,
			Active: it.Active, RateLimit: it.RateLimit, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt}
	})
}
