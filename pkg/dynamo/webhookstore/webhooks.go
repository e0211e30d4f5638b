package webhookstore

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// Webhook items. Every webhook is stored twice, as twins holding the same
// attributes: one found by id (pk IWH#/OWH#/SWH#<id>, sk #META), which the
// inbound path and management read with one GetItem; one listed in its
// workspace's partition (pk WS#<ws>, sk IWH#/OWH#/SWH#<sortTime(created)>#<id>),
// which the oldest-first lists read with one Query. Every write changes
// both in one transaction.

var _ webhooks.Store = (*Store)(nil)

// byIDKey and listedKey are the keys of w's twins.
func byIDKey(kind webhooks.Kind, id string) map[string]types.AttributeValue {
	switch kind {
	case webhooks.Inbound:
		return dynamo.Key(dynamo.InboundPK(id), dynamo.MetaSK)
	case webhooks.Outbound:
		return dynamo.Key(dynamo.OutboundPK(id), dynamo.MetaSK)
	default:
		return dynamo.Key(dynamo.SupportPK(id), dynamo.MetaSK)
	}
}

func ListedKey(w webhooks.Webhook) map[string]types.AttributeValue {
	switch w.Kind {
	case webhooks.Inbound:
		return dynamo.Key(dynamo.WsPK(w.WorkspaceID), dynamo.InboundSK(w.CreatedAt, w.ID))
	case webhooks.Outbound:
		return dynamo.Key(dynamo.WsPK(w.WorkspaceID), dynamo.OutboundSK(w.CreatedAt, w.ID))
	default:
		return dynamo.Key(dynamo.WsPK(w.WorkspaceID), dynamo.SupportSK(w.CreatedAt, w.ID))
	}
}

// ListedSK is the sort key of w's listed twin, which deliveries name their
// webhook by (events.Delivery.WebhookKey).
func ListedSK(w webhooks.Webhook) string {
	return ListedKey(w)[dynamo.AttrSK].(*types.AttributeValueMemberS).Value
}

func rotatedOf(w webhooks.Webhook) dynamo.Rotated {
	r := dynamo.Rotated{PreviousSecretHash: w.PreviousSecretHash, PreviousSigningSecret: w.PreviousSigningSecret}
	if !w.PreviousExpiresAt.IsZero() {
		t := w.PreviousExpiresAt.UTC()
		r.PreviousExpiresAt = &t
	}
	return r
}

// webhookItem returns w's item (without keys) as the table stores it.
func webhookItem(w webhooks.Webhook) any {
	switch w.Kind {
	case webhooks.Inbound:
		return dynamo.InboundItem{ID: w.ID, WorkspaceID: w.WorkspaceID, ChannelID: w.ChannelID, BotName: w.BotName,
			BotAvatarURL: w.BotAvatarURL, SecretHash: w.SecretHash, SignatureRequired: w.SignatureRequired,
			SigningSecret: w.SigningSecret, Enabled: w.Enabled, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, Rotated: rotatedOf(w)}
	case webhooks.Outbound:
		events := w.Events
		if events == nil {
			events = []string{}
		}
		return dynamo.OutboundItem{ID: w.ID, WorkspaceID: w.WorkspaceID, Name: w.Name, URL: w.URL, Events: events, Active: w.Active,
			RateLimit: w.RateLimit, SigningSecret: w.SigningSecret, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, Rotated: rotatedOf(w)}
	default:
		return dynamo.SupportItem{ID: w.ID, WorkspaceID: w.WorkspaceID, Name: w.Name, URL: w.URL, Active: w.Active,
			RateLimit: w.RateLimit, SigningSecret: w.SigningSecret, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, Rotated: rotatedOf(w)}
	}
}

// webhookOf decodes a stored item of kind; nil for a tombstone.
func webhookOf(kind webhooks.Kind, av map[string]types.AttributeValue) (*webhooks.Webhook, error) {
	var w webhooks.Webhook
	switch kind {
	case webhooks.Inbound:
		var it dynamo.InboundItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return nil, chat.Internal(err)
		}
		if it.DeletedAt != nil {
			return nil, nil
		}
		w = webhooks.Webhook{ID: it.ID, WorkspaceID: it.WorkspaceID, ChannelID: it.ChannelID, BotName: it.BotName,
			BotAvatarURL: it.BotAvatarURL, SecretHash: it.SecretHash, SignatureRequired: it.SignatureRequired,
			SigningSecret: it.SigningSecret, Enabled: it.Enabled, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt,
			PreviousSecretHash: it.PreviousSecretHash, PreviousSigningSecret: it.PreviousSigningSecret, PreviousExpiresAt: it.Expires()}
	case webhooks.Outbound:
		var it dynamo.OutboundItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return nil, chat.Internal(err)
		}
		w = webhooks.Webhook{ID: it.ID, WorkspaceID: it.WorkspaceID, Name: it.Name, URL: it.URL, Events: it.Events,
			Active: it.Active, RateLimit: it.RateLimit, SigningSecret: it.SigningSecret, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt,
			PreviousSigningSecret: it.PreviousSigningSecret, PreviousExpiresAt: it.Expires()}
	default:
		var it dynamo.SupportItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return nil, chat.Internal(err)
		}
		w = webhooks.Webhook{ID: it.ID, WorkspaceID: it.WorkspaceID, Name: it.Name, URL: it.URL, Active: it.Active,
			RateLimit: it.RateLimit, SigningSecret: it.SigningSecret, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt,
			PreviousSigningSecret: it.PreviousSigningSecret, PreviousExpiresAt: it.Expires()}
	}
	w.Kind = kind
	w.DisabledReason = dynamo.DisabledReason(w.Active, av)
	return &w, nil
}

// marshalItem is v as an item, with k's attributes (a twin's key) set.
func marshalItem(v any, k map[string]types.AttributeValue) map[string]types.AttributeValue {
	av, err := attributevalue.MarshalMap(v)
	if err != nil {
		// Our own structs of strings, numbers and times.
		panic("dynamo: marshal " + err.Error())
	}
	for n, v := range k {
		av[n] = v
	}
	return av
}

// optionalAttrs are the webhook attributes a write may need to remove: the
// item marshals none of them when empty, so a change that empties one (a
// PATCH's null clears bot_avatar_url and rate_limit) removes it from the
// twin it writes.
var optionalAttrs = []string{"previous_secret_hash", "previous_signing_secret", "previous_expires_at", "signing_secret", "bot_avatar_url", "rate_limit"}

// updateOf is an UpdateItem that sets every attribute of w's item but its
// keys, id, workspace and creation time, keeping attributes that other
// features add (a delivery's disabled_reason, say).
func updateOf(table string, k map[string]types.AttributeValue, w webhooks.Webhook, cond string, vals map[string]types.AttributeValue) *types.Update {
	av := marshalItem(webhookItem(w), nil)
	names := map[string]string{}
	if vals == nil {
		vals = map[string]types.AttributeValue{}
	}
	var attrs []string
	for n := range av {
		switch n {
		case dynamo.AttrPK, dynamo.AttrSK, "id", "workspace_id", "created_at":
		default:
			attrs = append(attrs, n)
		}
	}
	sort.Strings(attrs)
	var set, remove []string
	for i, n := range attrs {
		a, v := "#s"+dynamo.Itoa(i), ":s"+dynamo.Itoa(i)
		names[a], vals[v] = n, av[n]
		set = append(set, a+" = "+v)
	}
	for i, n := range optionalAttrs {
		if _, ok := av[n]; !ok {
			a := "#r" + dynamo.Itoa(i)
			names[a] = n
			remove = append(remove, a)
		}
	}
	expr := "SET " + strings.Join(set, ", ")
	if len(remove) > 0 {
		expr += " REMOVE " + strings.Join(remove, ", ")
	}
	for n, v := range condNames {
		if strings.Contains(cond, n) {
			names[n] = v
		}
	}
	return &types.Update{TableName: aws.String(table), Key: k, UpdateExpression: aws.String(expr),
		ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: vals}
}

var condNames = map[string]string{"#upd": "updated_at", "#ws": "workspace_id", "#del": "deleted_at"}

// unchanged is the condition that the by-id twin is still the one read.
const unchanged = "#upd = :old AND #ws = :ws AND attribute_not_exists(#del)"

func unchangedVals(old webhooks.Webhook) map[string]types.AttributeValue {
	upd, err := attributevalue.Marshal(old.UpdatedAt)
	if err != nil {
		panic("dynamo: marshal time " + err.Error())
	}
	return map[string]types.AttributeValue{":old": upd, ":ws": dynamo.Str(old.WorkspaceID)}
}

func (s *Store) channelCheck(ws, channel string) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &s.Name, Key: dynamo.Key(dynamo.WsPK(ws), dynamo.ChanSK(channel)),
		ConditionExpression: aws.String("attribute_exists(pk)")}}
}

// transactWebhook runs items; a failed condition of the item at channelAt (-1:
// none) is a 422 on channel_id, any other failure or collision EConflict.
func (s *Store) transactWebhook(ctx context.Context, op string, items []types.TransactWriteItem, channelAt int) error {
	_, err := s.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return nil
	}
	reasons := dynamo.Cancellation(err)
	switch {
	case reasons == nil:
		return dynamo.Fail(op, err)
	case channelAt >= 0 && dynamo.ConditionFailed(reasons, channelAt):
		return chat.FieldError("channel_id", webhooks.ErrChannelMessage)
	case dynamo.Conflicted(reasons) || dynamo.ConditionFailed(reasons, 0) || dynamo.ConditionFailed(reasons, 1):
		return &chat.Error{Code: chat.EConflict, Message: "The webhook changed meanwhile.", Err: err}
	}
	return dynamo.Fail(op, err)
}

// Load implements webhooks.Store with one BatchGetItem: the token and the
// webhook's by-id twin.
func (s *Store) Load(ctx context.Context, tokenHash string, kind webhooks.Kind, id string) (*workspaces.APIToken, *webhooks.Webhook, error) {
	keys := []map[string]types.AttributeValue{dynamo.Key(dynamo.APITokenPK(tokenHash), dynamo.MetaSK)}
	if id != "" {
		keys = append(keys, byIDKey(kind, id))
	}
	items, err := s.BatchGet(ctx, "load token and webhook", keys)
	if err != nil {
		return nil, nil, err
	}
	var tok *workspaces.APIToken
	var wh *webhooks.Webhook
	for _, it := range items {
		if dynamo.GetS(it, dynamo.AttrPK) == dynamo.APITokenPK(tokenHash) {
			t, err := dynamo.APITokenOf(it)
			if err != nil {
				return nil, nil, err
			}
			tok = &t
			continue
		}
		if wh, err = webhookOf(kind, it); err != nil {
			return nil, nil, err
		}
	}
	return tok, wh, nil
}

// Get implements webhooks.Store with one GetItem.
func (s *Store) Get(ctx context.Context, kind webhooks.Kind, id string) (*webhooks.Webhook, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: byIDKey(kind, id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, dynamo.Fail("get webhook", err)
	}
	if out.Item == nil {
		return nil, nil
	}
	return webhookOf(kind, out.Item)
}

// Create implements webhooks.Store with one TransactWriteItems: both twins,
// the inbound webhook's channel check, the audit event.
func (s *Store) Create(ctx context.Context, w webhooks.Webhook, ev webhooks.AuditEvent) error {
	item := webhookItem(w)
	items := []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.Name, Item: marshalItem(item, byIDKey(w.Kind, w.ID)),
			ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Put: &types.Put{TableName: &s.Name, Item: marshalItem(item, ListedKey(w)),
			ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}
	channelAt := -1
	if w.Kind == webhooks.Inbound {
		channelAt = len(items)
		items = append(items, s.channelCheck(w.WorkspaceID, w.ChannelID))
	}
	items = append(items, s.AuditPut(ev))
	return s.transactWebhook(ctx, "create webhook", items, channelAt)
}

// Update implements webhooks.Store with one TransactWriteItems.
func (s *Store) Update(ctx context.Context, old, next webhooks.Webhook, ev webhooks.AuditEvent) error {
	items := []types.TransactWriteItem{
		{Update: updateOf(s.Name, byIDKey(old.Kind, old.ID), next, unchanged, unchangedVals(old))},
		{Update: updateOf(s.Name, ListedKey(old), next, "attribute_exists(pk)", nil)},
	}
	if next.Kind != webhooks.Inbound && old.Active != next.Active {
		// Whoever disabled it before, an admin's change of active ends the
		// reason shown (the delivery function's; listed twin below).
		u := items[0].Update
		u.UpdateExpression = aws.String(addRemove(aws.ToString(u.UpdateExpression), "#dr"))
		u.ExpressionAttributeNames["#dr"] = dynamo.AttrDisabledReason
		if !next.Active {
			l := items[1].Update
			l.UpdateExpression = aws.String(addRemove(aws.ToString(l.UpdateExpression), "#dr"))
			l.ExpressionAttributeNames["#dr"] = dynamo.AttrDisabledReason
		}
	}
	if next.Kind != webhooks.Inbound && !old.Active && next.Active {
		// Re-enabled: the delivery function's failure streak and the reason
		// it disabled the webhook start over (the listed twin holds them),
		// and only events from now on are delivered (reenabled_at).
		u := items[1].Update
		expr := strings.Replace(aws.ToString(u.UpdateExpression), "SET ", "SET #reen = :reen, ", 1)
		u.UpdateExpression = aws.String(addRemove(expr, dynamo.AttrFailingSince, dynamo.AttrFailedAttempts, dynamo.AttrSlowSince, dynamo.AttrDisabledReason))
		u.ExpressionAttributeNames["#reen"] = dynamo.AttrReenabledAt
		u.ExpressionAttributeValues[":reen"] = dynamo.Str(next.UpdatedAt.UTC().Format(time.RFC3339Nano))
	}
	channelAt := -1
	if next.Kind == webhooks.Inbound && next.ChannelID != old.ChannelID {
		channelAt = len(items)
		items = append(items, s.channelCheck(next.WorkspaceID, next.ChannelID))
	}
	items = append(items, s.AuditPut(ev))
	return s.transactWebhook(ctx, "update webhook", items, channelAt)
}

// Delete implements webhooks.Store with one TransactWriteItems. An inbound
// webhook's by-id twin becomes a tombstone (disabled, without secrets) kept
// as long as its request log, so that the log stays readable; the other
// twins are deleted.
func (s *Store) Delete(ctx context.Context, old webhooks.Webhook, ev webhooks.AuditEvent, now time.Time) error {
	byID := types.TransactWriteItem{Delete: &types.Delete{TableName: &s.Name, Key: byIDKey(old.Kind, old.ID),
		ConditionExpression: aws.String(unchanged), ExpressionAttributeNames: map[string]string{"#upd": "updated_at", "#ws": "workspace_id", "#del": "deleted_at"},
		ExpressionAttributeValues: unchangedVals(old)}}
	if old.Kind == webhooks.Inbound {
		vals := unchangedVals(old)
		vals[":now"] = dynamo.Str(now.UTC().Format(time.RFC3339Nano))
		vals[":f"] = &types.AttributeValueMemberBOOL{Value: false}
		vals[":ttl"] = dynamo.Num(dynamo.Epoch(now.Add(dynamo.RequestLogRetention + 24*time.Hour)))
		byID = types.TransactWriteItem{Update: &types.Update{TableName: &s.Name, Key: byIDKey(old.Kind, old.ID),
			UpdateExpression: aws.String("SET #del = :now, #upd = :now, enabled = :f, #ttl = :ttl " +
				"REMOVE secret_hash, signing_secret, previous_secret_hash, previous_signing_secret, previous_expires_at"),
			ConditionExpression: aws.String(unchanged),
			ExpressionAttributeNames: map[string]string{"#upd": "updated_at", "#ws": "workspace_id", "#del": "deleted_at",
				"#ttl": dynamo.AttrTTL},
			ExpressionAttributeValues: vals}}
	}
	items := []types.TransactWriteItem{byID,
		{Delete: &types.Delete{TableName: &s.Name, Key: ListedKey(old)}},
		s.AuditPut(ev)}
	return s.transactWebhook(ctx, "delete webhook", items, -1)
}

// InboundWebhooks implements webhooks.Store with one Query of the listed
// twins.
func (s *Store) InboundWebhooks(ctx context.Context, ws, after string, limit int) (chat.Page[webhooks.Webhook], error) {
	q := dynamo.ListQuery{Op: "list inbound webhooks", PK: dynamo.WsPK(ws), Prefix: "IWH#", Forward: true}
	items, next, err := s.QueryPage(ctx, q, after, limit)
	if err != nil {
		return chat.Page[webhooks.Webhook]{}, err
	}
	page := chat.Page[webhooks.Webhook]{Next: next, Items: make([]webhooks.Webhook, 0, len(items)), After: make([]string, 0, len(items))}
	for _, av := range items {
		w, err := webhookOf(webhooks.Inbound, av)
		if err != nil {
			return chat.Page[webhooks.Webhook]{}, err
		}
		if w == nil {
			return chat.Page[webhooks.Webhook]{}, chat.Internal(errors.New("dynamo: listed inbound webhook is a tombstone"))
		}
		page.Items = append(page.Items, *w)
		page.After = append(page.After, dynamo.GetS(av, dynamo.AttrSK))
	}
	return page, nil
}

// addRemove adds names to an update expression's REMOVE clause.
func addRemove(expr string, names ...string) string {
	if strings.Contains(expr, " REMOVE ") {
		return expr + ", " + strings.Join(names, ", ")
	}
	return expr + " REMOVE " + strings.Join(names, ", ")
}
