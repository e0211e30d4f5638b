package inboundstore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/inbound"
)

var _ inbound.SettingsReader = (*Store)(nil)

// InboundSettings implements inbound.SettingsReader with one consistent
// GetItem of the webhook's by-id item (a tombstone once deleted).
func (s *Store) InboundSettings(ctx context.Context, id string) (inbound.Config, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: dynamo.Key(dynamo.InboundPK(id), dynamo.MetaSK), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return inbound.Config{}, dynamo.Fail("get inbound webhook", err)
	}
	if out.Item == nil {
		return inbound.Config{}, chat.Errorf(chat.EWebhookNotFound, "The webhook does not exist or is disabled.")
	}
	var wh dynamo.InboundItem
	if err := attributevalue.UnmarshalMap(out.Item, &wh); err != nil {
		return inbound.Config{}, chat.Internal(err)
	}
	return inbound.Config{
		Webhook: chat.InboundWebhook{ID: wh.ID, WorkspaceID: wh.WorkspaceID, ChannelID: wh.ChannelID, BotName: wh.BotName,
			BotAvatarURL: wh.BotAvatarURL, SecretHash: wh.SecretHash, SignatureRequired: wh.SignatureRequired,
			SigningSecret: wh.SigningSecret, Enabled: wh.Enabled && wh.DeletedAt == nil, CreatedAt: wh.CreatedAt, UpdatedAt: wh.UpdatedAt,
			PreviousSecretHash: wh.PreviousSecretHash, PreviousSigningSecret: wh.PreviousSigningSecret, PreviousExpiresAt: wh.Expires()},
		Workspace: chat.Workspace{ID: wh.WorkspaceID},
		Deleted:   wh.DeletedAt != nil,
	}, nil
}
