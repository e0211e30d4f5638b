package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/workspaces"
)

var _ workspaces.TokenStore = (*Table)(nil)

// APIToken implements workspaces.TokenStore with one GetItem: every
// workspace API function authenticates its caller, so the lookup is the
// table's own rather than a store's.
func (s *Table) APIToken(ctx context.Context, hash string) (workspaces.APIToken, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: Key(APITokenPK(hash), MetaSK)})
	if err != nil {
		return workspaces.APIToken{}, Fail("get api token", err)
	}
	if out.Item == nil {
		return workspaces.APIToken{}, chat.Errorf(chat.ENotFound, "no such token")
	}
	return APITokenOf(out.Item)
}
