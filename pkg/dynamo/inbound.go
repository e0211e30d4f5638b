package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/inbound"
)

var (
	_ inbound.ConfigSource = (*Store)(nil)
	_ inbound.QuotaCounter = (*Store)(nil)
	_ inbound.Store        = (*Store)(nil)
)

// RequestLogRetention is how long request log records are kept.
const RequestLogRetention = 30 * 24 * time.Hour

func idemPK(webhook, keyHash string) string { return "IDEM#" + webhook + "#" + keyHash }
func sigPK(webhook, hash string) string     { return "SIG#" + webhook + "#" + hash }
func quotaPK(ws string, window time.Time) string {
	return "QUOTA#" + ws + "#" + strconv.FormatInt(window.Unix(), 10)
}
func reqLogPK(ws, webhook string) string { return "REQLOG#" + ws + "#" + webhook }
func reqLogSK(id string) string          { return "REQ#" + id }

// idemItem is an idempotency record: pk IDEM#<webhook>#<sha256(key)>. This
// version writes it completed; owner and locked_until are read only from a
// record in progress that an earlier version's separate claim wrote.
type idemItem struct {
	PK          string `dynamodbav:"pk"`
	SK          string `dynamodbav:"sk"`
	State       string `dynamodbav:"state"`
	Key         string `dynamodbav:"idempotency_key"`
	Fingerprint string `dynamodbav:"fingerprint"`
	Owner       string `dynamodbav:"owner,omitempty"`
	LockedUntil int64  `dynamodbav:"locked_until,omitempty"`
	Expires     int64  `dynamodbav:"expires_epoch"`
	TTL         int64  `dynamodbav:"ttl"`
	Status      int    `dynamodbav:"status,omitempty"`
	Body        string `dynamodbav:"body,omitempty"`
	MessageID   string `dynamodbav:"message_id,omitempty"`
}

// sigItem records a used signature: pk SIG#<webhook>#<sha256(v1)>.
type sigItem struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	KeyHash string `dynamodbav:"key_hash"`
	Expires int64  `dynamodbav:"expires_epoch"`
	TTL     int64  `dynamodbav:"ttl"`
}

// requestLogItem is one inbound request: pk REQLOG#<ws>#<webhook>,
// sk REQ#<ulid>, so a query newest first needs no index and a workspace can
// only ever read its own.
type requestLogItem struct {
	PK             string    `dynamodbav:"pk"`
	SK             string    `dynamodbav:"sk"`
	ID             string    `dynamodbav:"id"`
	WorkspaceID    string    `dynamodbav:"workspace_id"`
	WebhookID      string    `dynamodbav:"webhook_id"`
	ReceivedAt     time.Time `dynamodbav:"received_at"`
	Status         int       `dynamodbav:"status"`
	Outcome        string    `dynamodbav:"outcome"`
	ErrorCode      string    `dynamodbav:"error_code"`
	MessageID      string    `dynamodbav:"message_id"`
	IdempotencyKey string    `dynamodbav:"idempotency_key"`
	AuthScheme     string    `dynamodbav:"auth_scheme"`
	SourceIP       string    `dynamodbav:"source_ip"`
	UserAgent      string    `dynamodbav:"user_agent"`
	BodyBytes      int       `dynamodbav:"body_bytes"`
	DurationMS     int64     `dynamodbav:"duration_ms"`
	TTL            int64     `dynamodbav:"ttl"`
}

func requestLogItemOf(r chat.RequestLog) requestLogItem {
	return requestLogItem{
		PK: reqLogPK(r.WorkspaceID, r.WebhookID), SK: reqLogSK(r.ID), ID: r.ID, WorkspaceID: r.WorkspaceID,
		WebhookID: r.WebhookID, ReceivedAt: r.ReceivedAt, Status: r.Status, Outcome: r.Outcome, ErrorCode: r.ErrorCode,
		MessageID: r.MessageID, IdempotencyKey: r.IdempotencyKey, AuthScheme: r.AuthScheme, SourceIP: r.SourceIP,
		UserAgent: r.UserAgent, BodyBytes: r.BodyBytes, DurationMS: r.DurationMS,
		TTL: epoch(r.ReceivedAt.Add(RequestLogRetention)),
	}
}

// WebhookConfig implements inbound.ConfigSource: one GetItem for the
// webhook and one Query for its workspace and channels.
func (s *Store) WebhookConfig(ctx context.Context, id string) (inbound.Config, error) {
	cfg, err := s.InboundSettings(ctx, id)
	if err != nil {
		return inbound.Config{}, err
	}
	wh := cfg.Webhook
	cfg.Channels = map[string]bool{}
	// "#META" sorts before "CHAN#", and "CHAN$" right after every channel.
	in := &dynamodb.QueryInput{
		TableName:                 &s.table,
		KeyConditionExpression:    aws.String("pk = :pk AND sk < :hi"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(wsPK(wh.WorkspaceID)), ":hi": str("CHAN$")},
		ProjectionExpression:      aws.String("sk, id, default_language, webhook_quota_per_minute, #n"),
		ExpressionAttributeNames:  map[string]string{"#n": "name"},
	}
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return inbound.Config{}, fail("query workspace channels", err)
		}
		for _, it := range page.Items {
			if getS(it, attrSK) == metaSK {
				var w workspaceItem
				if err := attributevalue.UnmarshalMap(it, &w); err != nil {
					return inbound.Config{}, chat.Internal(err)
				}
				cfg.Workspace = chat.Workspace{ID: wh.WorkspaceID, Name: w.Name, DefaultLanguage: w.DefaultLanguage, WebhookQuota: w.WebhookQuota}
				continue
			}
			cfg.Channels[getS(it, "id")] = true
		}
	}
	return cfg, nil
}

// Hit implements inbound.QuotaCounter with one atomic UpdateItem.
func (s *Store) Hit(ctx context.Context, ws string, window, expires time.Time) (int64, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       key(quotaPK(ws, window), metaSK),
		UpdateExpression:          aws.String("ADD #c :one SET #ttl = if_not_exists(#ttl, :ttl)"),
		ExpressionAttributeNames:  map[string]string{"#c": "count", "#ttl": attrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": num(1), ":ttl": num(epoch(expires.Add(time.Hour)))},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, fail("count quota", err)
	}
	n, ok := out.Attributes["count"].(*types.AttributeValueMemberN)
	if !ok {
		return 0, chat.Internal(errors.New("dynamo: quota counter without count"))
	}
	return strconv.ParseInt(n.Value, 10, 64)
}

// sigCondition is the condition under which u may be used: never used, or
// no longer fresh, or used by a request with the same valid key (an
// idempotent retry may resend the very same signed request).
func sigCondition(u *inbound.SignatureUse, now time.Time) (string, map[string]types.AttributeValue) {
	cond := "attribute_not_exists(pk) OR expires_epoch <= :now"
	vals := map[string]types.AttributeValue{":now": num(now.Unix())}
	if u.KeyHash != "" {
		cond += " OR key_hash = :kh"
		vals[":kh"] = str(u.KeyHash)
	}
	return cond, vals
}

// sigWrite records u, or with u.CheckOnly only checks it, on condition that
// it may be used.
func (s *Store) sigWrite(u *inbound.SignatureUse, now time.Time) types.TransactWriteItem {
	cond, vals := sigCondition(u, now)
	if u.CheckOnly {
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &s.table,
			Key: key(sigPK(u.WebhookID, u.Hash), metaSK), ConditionExpression: &cond, ExpressionAttributeValues: vals}}
	}
	it := sigItem{PK: sigPK(u.WebhookID, u.Hash), SK: metaSK, KeyHash: u.KeyHash, Expires: epoch(u.ExpiresAt), TTL: epoch(u.ExpiresAt.Add(time.Hour))}
	return put(s.table, it, cond, vals)
}

// transact runs a transaction, retrying when it collided with a concurrent
// one on the same items (which DynamoDB cancels rather than serialises).
// A transaction cancelled for another reason returns its reasons.
func (s *Store) transact(ctx context.Context, op string, items []types.TransactWriteItem) ([]types.CancellationReason, error) {
	if err := checkTransactionSize(items); err != nil {
		return nil, chat.Internal(fmt.Errorf("dynamo: %s: %w", op, err))
	}
	for attempt := 0; ; attempt++ {
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil {
			return nil, nil
		}
		reasons := cancellation(err)
		if reasons == nil {
			return nil, fail(op, err)
		}
		if !conflicted(reasons) {
			return reasons, nil
		}
		if attempt >= 4 {
			return nil, chat.Errorf(chat.EConflict, "%s: transaction kept colliding", op)
		}
		backoff := time.Duration(10<<attempt)*time.Millisecond + time.Duration(rand.IntN(20))*time.Millisecond
		select {
		case <-ctx.Done():
			return nil, fail(op, ctx.Err())
		case <-time.After(backoff):
		}
	}
}

// Accept implements inbound.Store with one TransactWriteItems: the
// signature use, the completed idempotency record (claimed and completed
// at once, on condition that no live record holds the key; a failed
// condition returns the record that holds it), the message and its log
// record; with a.Judged, a ConditionCheck that the webhook's by-id item
// still holds the settings judged on (SettingsChanged otherwise).
func (s *Store) Accept(ctx context.Context, a inbound.Acceptance, now time.Time) (inbound.Outcome, inbound.Record, error) {
	items, sigIdx, keyIdx := s.acceptItems(a, now)
	verIdx := -1
	if a.Judged != nil {
		check, err := s.versionCheck(*a.Judged)
		if err != nil {
			return 0, inbound.Record{}, err
		}
		verIdx = len(items)
		items = append(items, check)
	}
	reasons, err := s.transact(ctx, "accept inbound message", items)
	if chat.IsCode(err, chat.EConflict) {
		if a.Key != nil {
			// Another request's transaction on this key is in flight.
			e := chat.Errorf(chat.EIdempotencyKeyInUse, "A request with this Idempotency-Key is still being processed. Retry later.")
			e.RetryAfter, e.Err = 1, err
			return 0, inbound.Record{}, e
		}
		return 0, inbound.Record{}, chat.Unavailable(err)
	}
	if err != nil {
		return 0, inbound.Record{}, err
	}
	switch {
	case reasons == nil:
		return inbound.Written, inbound.Record{}, nil
	case verIdx >= 0 && conditionFailed(reasons, verIdx):
		return inbound.SettingsChanged, inbound.Record{}, nil
	case sigIdx >= 0 && conditionFailed(reasons, sigIdx):
		return inbound.SignatureUsed, inbound.Record{}, nil
	case keyIdx >= 0 && conditionFailed(reasons, keyIdx):
		var old idemItem
		if err := attributevalue.UnmarshalMap(reasons[keyIdx].Item, &old); err != nil {
			return 0, inbound.Record{}, chat.Internal(err)
		}
		return inbound.KeyHeld, inbound.Record{
			State: old.State, Fingerprint: old.Fingerprint,
			LockedUntil: time.Unix(old.LockedUntil, 0), ExpiresAt: time.Unix(old.Expires, 0),
			Status: old.Status, Body: []byte(old.Body), MessageID: old.MessageID,
		}, nil
	}
	return 0, inbound.Record{}, chat.Internal(fmt.Errorf("dynamo: accept cancelled for an unexpected reason: %s", reasonCodes(reasons)))
}

// acceptItems are the writes of Accept, with the indexes of the signature
// and the idempotency record among them (-1 when absent).
func (s *Store) acceptItems(a inbound.Acceptance, now time.Time) (items []types.TransactWriteItem, sigIdx, keyIdx int) {
	sigIdx, keyIdx = -1, -1
	if a.Signature != nil {
		sigIdx = len(items)
		items = append(items, s.sigWrite(a.Signature, now))
	}
	if k := a.Key; k != nil {
		it := idemItem{
			PK: idemPK(k.WebhookID, k.KeyHash), SK: metaSK, State: inbound.StateCompleted, Key: k.Key,
			Fingerprint: k.Fingerprint, Expires: epoch(k.ExpiresAt), TTL: epoch(k.ExpiresAt.Add(time.Hour)),
			Status: a.Status, Body: string(a.Body), MessageID: a.Message.ID,
		}
		// A record in progress is an earlier version's claim: it holds the
		// key until its lock expires.
		claim := put(s.table, it, "attribute_not_exists(pk) OR expires_epoch <= :now OR (#st = :inprog AND locked_until <= :now)",
			map[string]types.AttributeValue{":inprog": str(inbound.StateInProgress), ":now": num(now.Unix())})
		claim.Put.ExpressionAttributeNames = map[string]string{"#st": "state"}
		claim.Put.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
		keyIdx = len(items)
		items = append(items, claim)
	}
	items = append(items,
		put(s.table, messageItemOf(a.Message), "attribute_not_exists(pk)", nil),
		put(s.table, requestLogItemOf(a.Log), "attribute_not_exists(pk)", nil),
	)
	return items, sigIdx, keyIdx
}

// Log implements inbound.Store: one PutItem, or with sig one
// TransactWriteItems that also records (or checks) the signature.
func (s *Store) Log(ctx context.Context, rec chat.RequestLog, sig *inbound.SignatureUse, now time.Time) (inbound.Outcome, error) {
	if sig != nil {
		// The record's id is this request's own: nothing else writes it.
		reasons, err := s.transact(ctx, "put request log", []types.TransactWriteItem{
			s.sigWrite(sig, now), put(s.table, requestLogItemOf(rec), "", nil),
		})
		switch {
		case chat.IsCode(err, chat.EConflict):
			return 0, chat.Unavailable(err)
		case err != nil:
			return 0, err
		case reasons == nil:
			return inbound.Written, nil
		case conditionFailed(reasons, 0):
			return inbound.SignatureUsed, nil
		}
		return 0, chat.Internal(fmt.Errorf("dynamo: put request log cancelled for an unexpected reason: %s", reasonCodes(reasons)))
	}
	av, err := attributevalue.MarshalMap(requestLogItemOf(rec))
	if err != nil {
		return 0, chat.Internal(err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: av, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return inbound.Written, nil
	}
	if err != nil {
		return 0, fail("put request log", err)
	}
	return inbound.Written, nil
}

// reasonCodes lists the codes of a cancelled transaction, for logs.
func reasonCodes(reasons []types.CancellationReason) string {
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		codes[i] = aws.ToString(r.Code)
	}
	return strings.Join(codes, ",")
}

// RequestLogs lists a webhook's request log newest first with one Query
// (listPage).
func (s *Store) RequestLogs(ctx context.Context, ws, webhook, after string, limit int) (chat.Page[chat.RequestLog], error) {
	q := listQuery{op: "list request log", pk: reqLogPK(ws, webhook), prefix: "REQ#"}
	return listPage(ctx, s, q, after, limit, func(it requestLogItem) chat.RequestLog {
		return chat.RequestLog{ID: it.ID, WorkspaceID: it.WorkspaceID, WebhookID: it.WebhookID,
			ReceivedAt: it.ReceivedAt, Status: it.Status, Outcome: it.Outcome, ErrorCode: it.ErrorCode, MessageID: it.MessageID,
			IdempotencyKey: it.IdempotencyKey, AuthScheme: it.AuthScheme, SourceIP: it.SourceIP, UserAgent: it.UserAgent,
			BodyBytes: it.BodyBytes, DurationMS: it.DurationMS}
	})
}

// InboundWebhookOf returns the inbound webhook id in workspace ws, with one
// GetItem. Errors: ENotFound when it does not exist there.
func (s *Store) InboundWebhookOf(ctx context.Context, ws, id string) error {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: key(inboundPK(id), metaSK),
		ProjectionExpression: aws.String("workspace_id")})
	if err != nil {
		return fail("get inbound webhook", err)
	}
	if out.Item == nil || getS(out.Item, "workspace_id") != ws {
		return chat.Errorf(chat.ENotFound, "The webhook does not exist.")
	}
	return nil
}
