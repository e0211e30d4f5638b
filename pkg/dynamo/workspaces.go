package dynamo

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
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
	return workspaces.APIToken{Hash: strings.TrimPrefix(it.PK, "APITOKEN#"), WorkspaceID: it.WorkspaceID, UserID: it.UserID,
		Revoked: it.Revoked, Role: it.Role}, nil
}

// queryPage reads up to limit items of partition pk whose sort key starts
// with prefix, after the position after, in the given order, with one
// Query. It asks for one item more than limit to learn whether another page
// exists without a second call.
func (s *Store) queryPage(ctx context.Context, op, pk, prefix, after string, limit int, forward bool) ([]map[string]types.AttributeValue, string, error) {
	in := &dynamodb.QueryInput{
		TableName:              &s.table,
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(pk), ":prefix": str(prefix),
		},
		Limit:            aws.Int32(int32(limit + 1)),
		ScanIndexForward: aws.Bool(forward),
	}
	if after != "" {
		if !strings.HasPrefix(after, prefix) {
			return nil, "", chat.FieldError("cursor", "The cursor is invalid.")
		}
		in.ExclusiveStartKey = key(pk, after)
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, "", fail(op, err)
	}
	items := out.Items
	next := ""
	if len(items) > limit {
		items = items[:limit]
		next = getS(items[limit-1], attrSK)
	}
	return items, next, nil
}

// OutboundWebhooks implements workspaces.WebhookStore with one Query.
func (s *Store) OutboundWebhooks(ctx context.Context, ws, after string, limit int) (chat.Page[chat.OutboundWebhook], error) {
	items, next, err := s.queryPage(ctx, "list outbound webhooks", wsPK(ws), "OWH#", after, limit, true)
	if err != nil {
		return chat.Page[chat.OutboundWebhook]{}, err
	}
	page := chat.Page[chat.OutboundWebhook]{Next: next, Items: make([]chat.OutboundWebhook, 0, len(items))}
	for _, av := range items {
		var it outboundItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return chat.Page[chat.OutboundWebhook]{}, chat.Internal(err)
		}
		page.Items = append(page.Items, chat.OutboundWebhook{ID: it.ID, WorkspaceID: it.WorkspaceID, Name: it.Name, URL: it.URL,
			Events: it.Events, Active: it.Active, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt})
	}
	return page, nil
}

// SupportWebhooks implements workspaces.WebhookStore with one Query.
func (s *Store) SupportWebhooks(ctx context.Context, ws, after string, limit int) (chat.Page[chat.SupportWebhook], error) {
	items, next, err := s.queryPage(ctx, "list support webhooks", wsPK(ws), "SWH#", after, limit, true)
	if err != nil {
		return chat.Page[chat.SupportWebhook]{}, err
	}
	page := chat.Page[chat.SupportWebhook]{Next: next, Items: make([]chat.SupportWebhook, 0, len(items))}
	for _, av := range items {
		var it supportItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return chat.Page[chat.SupportWebhook]{}, chat.Internal(err)
		}
		page.Items = append(page.Items, chat.SupportWebhook{ID: it.ID, WorkspaceID: it.WorkspaceID, Name: it.Name, URL: it.URL,
			Active: it.Active, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt})
	}
	return page, nil
}
