package tokenstore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/workspaces"
)

var _ workspaces.TokenStore = (*Store)(nil)

// APIToken implements workspaces.TokenStore with one GetItem.
func (s *Store) APIToken(ctx context.Context, hash string) (workspaces.APIToken, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: dynamo.Key(dynamo.APITokenPK(hash), dynamo.MetaSK)})
	if err != nil {
		return workspaces.APIToken{}, dynamo.Fail("get api token", err)
	}
	if out.Item == nil {
		return workspaces.APIToken{}, chat.Errorf(chat.ENotFound, "no such token")
	}
	return dynamo.APITokenOf(out.Item)
}
