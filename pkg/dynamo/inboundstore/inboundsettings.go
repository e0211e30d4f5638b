package inboundstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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

// versionCheck is the accept transaction's check that the webhook's by-id
// item still holds every setting the request was judged on, and the same
// updated_at: a change, a rotation, a deletion or chatctl apply between
// the read and the acceptance fails it, even within one clock tick.
func (s *Store) versionCheck(wh chat.InboundWebhook) (types.TransactWriteItem, error) {
	names := map[string]string{}
	vals := map[string]types.AttributeValue{}
	var conds []string
	add := func(attr string, v any) error {
		n, p := "#v"+dynamo.Itoa(len(names)), ":v"+dynamo.Itoa(len(names))
		names[n] = attr
		switch x := v.(type) {
		case string:
			if x == "" {
				vals[p] = dynamo.Str("")
				conds = append(conds, "(attribute_not_exists("+n+") OR "+n+" = "+p+")")
				return nil
			}
		case time.Time:
			if x.IsZero() {
				conds = append(conds, "attribute_not_exists("+n+")")
				return nil
			}
		}
		av, err := attributevalue.Marshal(v)
		if err != nil {
			return chat.Internal(fmt.Errorf("dynamo: marshal %s: %w", attr, err))
		}
		vals[p] = av
		conds = append(conds, n+" = "+p)
		return nil
	}
	for _, f := range []struct {
		attr string
		v    any
	}{
		{"updated_at", wh.UpdatedAt}, {"workspace_id", wh.WorkspaceID}, {"channel_id", wh.ChannelID}, {"bot_name", wh.BotName},
		{"bot_avatar_url", wh.BotAvatarURL}, {"secret_hash", wh.SecretHash}, {"signature_required", wh.SignatureRequired},
		{"signing_secret", wh.SigningSecret}, {"enabled", wh.Enabled}, {"previous_secret_hash", wh.PreviousSecretHash},
		{"previous_signing_secret", wh.PreviousSigningSecret}, {"previous_expires_at", wh.PreviousExpiresAt}, {"deleted_at", time.Time{}},
	} {
		if err := add(f.attr, f.v); err != nil {
			return types.TransactWriteItem{}, err
		}
	}
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &s.Name,
		Key: dynamo.Key(dynamo.InboundPK(wh.ID), dynamo.MetaSK), ConditionExpression: aws.String(strings.Join(conds, " AND ")),
		ExpressionAttributeNames: names, ExpressionAttributeValues: vals}}, nil
}
