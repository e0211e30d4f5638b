package inboundstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/inbound"
)

var (
	_ inbound.ConfigSource = (*Store)(nil)
	_ inbound.QuotaCounter = (*Store)(nil)
	_ inbound.Store        = (*Store)(nil)
)

func idemPK(webhook, keyHash string) string { return "IDEM#" + webhook + "#" + keyHash }
func sigPK(webhook, hash string) string     { return "SIG#" + webhook + "#" + hash }
func quotaPK(ws string, window time.Time) string {
	return "QUOTA#" + ws + "#" + strconv.FormatInt(window.Unix(), 10)
}
func reqLogPK(ws, webhook string) string { return "REQLOG#" + ws + "#" + webhook }
func reqLogSK(id string) string          { return "REQ#" + id }

// idemItem is an idempotency record: pk IDEM#<webhook>#<sha256(key)>. A
// post writes it completed, with its answer's body; a webhook's change
// claims it in progress (owner, locked_until), then completes it with the
// message an edit left (an edit's view may not fit an item: it is rebuilt).
type idemItem struct {
	PK          string              `dynamodbav:"pk"`
	SK          string              `dynamodbav:"sk"`
	State       string              `dynamodbav:"state"`
	Key         string              `dynamodbav:"idempotency_key"`
	Fingerprint string              `dynamodbav:"fingerprint"`
	Owner       string              `dynamodbav:"owner,omitempty"`
	LockedUntil int64               `dynamodbav:"locked_until,omitempty"`
	Expires     int64               `dynamodbav:"expires_epoch"`
	TTL         int64               `dynamodbav:"ttl"`
	Status      int                 `dynamodbav:"status,omitempty"`
	Body        string              `dynamodbav:"body,omitempty"`
	MessageID   string              `dynamodbav:"message_id,omitempty"`
	Message     *dynamo.MessageItem `dynamodbav:"message,omitempty"`
}

// idemItemOf is k's record in state, without an answer.
func idemItemOf(k *inbound.KeyUse, state string) idemItem {
	it := idemItem{PK: idemPK(k.WebhookID, k.KeyHash), SK: dynamo.MetaSK, State: state, Key: k.Key,
		Fingerprint: k.Fingerprint, Expires: dynamo.Epoch(k.ExpiresAt), TTL: dynamo.Epoch(k.ExpiresAt.Add(time.Hour))}
	if state == inbound.StateInProgress {
		it.Owner, it.LockedUntil = k.Owner, dynamo.Epoch(k.LockedUntil)
	}
	return it
}

// claim is the transaction's Put of it, on condition that no live record
// holds its key: none, an expired one, or one in progress whose lock
// lapsed. A failed condition returns the record that holds it (ALL_OLD).
func (s *Store) claim(it idemItem, now time.Time) types.TransactWriteItem {
	claim := dynamo.Put(s.Name, it, "attribute_not_exists(pk) OR expires_epoch <= :now OR (#st = :inprog AND locked_until <= :now)",
		map[string]types.AttributeValue{":inprog": dynamo.Str(inbound.StateInProgress), ":now": dynamo.Num(now.Unix())})
	claim.Put.ExpressionAttributeNames = map[string]string{"#st": "state"}
	claim.Put.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	return claim
}

// heldRecord is the record a failed claim returned.
func heldRecord(item map[string]types.AttributeValue) (inbound.Record, error) {
	var old idemItem
	if err := attributevalue.UnmarshalMap(item, &old); err != nil {
		return inbound.Record{}, chat.Internal(err)
	}
	rec := inbound.Record{
		State: old.State, Fingerprint: old.Fingerprint,
		LockedUntil: time.Unix(old.LockedUntil, 0), ExpiresAt: time.Unix(old.Expires, 0),
		Status: old.Status, Body: []byte(old.Body), MessageID: old.MessageID,
	}
	if old.Message != nil {
		m := old.Message.Message()
		rec.Message = &m
	}
	return rec, nil
}

// keyInUse is the answer to a transaction with a key that kept colliding
// with another one: another request's transaction on the key is in flight.
func keyInUse(err error) error {
	e := chat.Errorf(chat.EIdempotencyKeyInUse, "A request with this Idempotency-Key is still being processed. Retry later.")
	e.RetryAfter, e.Err = 1, err
	return e
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
		TTL: dynamo.Epoch(r.ReceivedAt.Add(dynamo.RequestLogRetention)),
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
		TableName:                 &s.Name,
		KeyConditionExpression:    aws.String("pk = :pk AND sk < :hi"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(dynamo.WsPK(wh.WorkspaceID)), ":hi": dynamo.Str("CHAN$")},
		ProjectionExpression:      aws.String("sk, id, default_language, webhook_quota_per_minute, #n"),
		ExpressionAttributeNames:  map[string]string{"#n": "name"},
	}
	p := dynamodb.NewQueryPaginator(s.Client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return inbound.Config{}, dynamo.Fail("query workspace channels", err)
		}
		for _, it := range page.Items {
			if dynamo.GetS(it, dynamo.AttrSK) == dynamo.MetaSK {
				var w dynamo.WorkspaceItem
				if err := attributevalue.UnmarshalMap(it, &w); err != nil {
					return inbound.Config{}, chat.Internal(err)
				}
				cfg.Workspace = chat.Workspace{ID: wh.WorkspaceID, Name: w.Name, DefaultLanguage: w.DefaultLanguage, WebhookQuota: w.WebhookQuota}
				continue
			}
			cfg.Channels[dynamo.GetS(it, "id")] = true
		}
	}
	return cfg, nil
}

// quotaPerShard is the most requests a shard of a quota window admits
// (unless the window has MaxCounterShards): a whole window's admissions
// arriving in one second then write each shard at most 750 times, with
// room left in its partition's 1,000 for the refusals (one per instance).
// The default quota (600) has one shard, so its remaining count is exact;
// more than 11,250 a minute have the 16 that take 16,000 requests a second.
const quotaPerShard = 750

// quotaCounter is the workspace's counter of the window, limit split over
// its shards.
func quotaCounter(ws string, window, expires time.Time, limit int) dynamo.ShardedCounter {
	return dynamo.ShardedCounter{Base: quotaPK(ws, window), Attr: "count", Limit: int64(limit),
		Shards: dynamo.CounterShards(int64(limit), quotaPerShard), TTL: dynamo.Epoch(expires.Add(time.Hour))}
}

// Take implements inbound.QuotaCounter with one conditional UpdateItem of a
// random shard of the window (dynamo.Table.Spend): exact, never past
// limit. Only near the limit, when its shard is full, does a request read
// every shard (BatchGetItem) and take another one's room; a refused request
// counts nothing, and this instance then refuses the window's requests
// without a call until it ends (dynamo.CounterCache). remaining is exact
// with one shard (limits up to 750), else the request's shard's share
// left, scaled to the whole. Errors: EUnavailable.
func (s *Store) Take(ctx context.Context, ws string, window time.Time, limit int, expires time.Time) (bool, int, error) {
	if limit <= 0 {
		return false, 0, nil
	}
	spent, err := s.Spend(ctx, quotaCounter(ws, window, expires, limit), 1, &s.quotaSeen)
	if err != nil {
		return false, 0, err
	}
	return spent.OK, int(spent.Remaining), nil
}

// sigCondition is the condition under which u may be used: never used, or
// no longer fresh, or used by a request with the same valid key (an
// idempotent retry may resend the very same signed request).
func sigCondition(u *inbound.SignatureUse, now time.Time) (string, map[string]types.AttributeValue) {
	cond := "attribute_not_exists(pk) OR expires_epoch <= :now"
	vals := map[string]types.AttributeValue{":now": dynamo.Num(now.Unix())}
	if u.KeyHash != "" {
		cond += " OR key_hash = :kh"
		vals[":kh"] = dynamo.Str(u.KeyHash)
	}
	return cond, vals
}

// sigWrite records u, or with u.CheckOnly only checks it, on condition that
// it may be used.
func (s *Store) sigWrite(u *inbound.SignatureUse, now time.Time) types.TransactWriteItem {
	cond, vals := sigCondition(u, now)
	if u.CheckOnly {
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &s.Name,
			Key: dynamo.Key(sigPK(u.WebhookID, u.Hash), dynamo.MetaSK), ConditionExpression: &cond, ExpressionAttributeValues: vals}}
	}
	it := sigItem{PK: sigPK(u.WebhookID, u.Hash), SK: dynamo.MetaSK, KeyHash: u.KeyHash, Expires: dynamo.Epoch(u.ExpiresAt), TTL: dynamo.Epoch(u.ExpiresAt.Add(time.Hour))}
	return dynamo.Put(s.Name, it, cond, vals)
}

// Accept implements inbound.Store with one TransactWriteItems: the
// signature use, the completed idempotency record (claimed and completed
// at once, on condition that no live record holds the key; a failed
// condition returns the record that holds it), the message and its log
// record, and a reply's root (dynamo.TransactPost). Besides a reply's root,
// it holds no item that another request of the webhook writes or checks,
// so a webhook's concurrent posts never cancel each other (replies to one
// root that collide are sent again).
func (s *Store) Accept(ctx context.Context, a inbound.Acceptance, now time.Time) (inbound.Outcome, inbound.Record, error) {
	var sigIdx, keyIdx, msgIdx int
	reasons, err := s.TransactPost(ctx, "accept inbound message", a.Message, func(root *types.TransactWriteItem) ([]types.TransactWriteItem, int, int) {
		var items []types.TransactWriteItem
		items, sigIdx, keyIdx, msgIdx = s.acceptItems(a, now)
		if root == nil {
			return items, msgIdx, -1
		}
		return append(items, *root), msgIdx, len(items)
	})
	if chat.IsCode(err, chat.EConflict) {
		if a.Key != nil {
			return 0, inbound.Record{}, keyInUse(err)
		}
		return 0, inbound.Record{}, chat.Unavailable(err)
	}
	if err != nil {
		return 0, inbound.Record{}, err
	}
	switch {
	case reasons == nil:
		return inbound.Written, inbound.Record{}, nil
	case dynamo.ConditionFailed(reasons, msgIdx) && dynamo.OwnMessage(reasons[msgIdx].Item, a.Message):
		// This very transaction committed, its answer was lost and the SDK
		// sent it again: it met its own writes (its message, signature and
		// key record), which are all there.
		return inbound.Written, inbound.Record{}, nil
	case sigIdx >= 0 && dynamo.ConditionFailed(reasons, sigIdx):
		return inbound.SignatureUsed, inbound.Record{}, nil
	case keyIdx >= 0 && dynamo.ConditionFailed(reasons, keyIdx):
		rec, err := heldRecord(reasons[keyIdx].Item)
		if err != nil {
			return 0, inbound.Record{}, err
		}
		return inbound.KeyHeld, rec, nil
	case dynamo.ClaimFailure(reasons, msgIdx+2, a.Message) != nil:
		return 0, inbound.Record{}, dynamo.ClaimFailure(reasons, msgIdx+2, a.Message)
	}
	return 0, inbound.Record{}, chat.Internal(fmt.Errorf("dynamo: accept cancelled for an unexpected reason: %s", dynamo.ReasonCodes(reasons)))
}

// acceptItems are the writes of Accept, with the indexes of the signature
// and the idempotency record among them (-1 when absent) and the message's.
func (s *Store) acceptItems(a inbound.Acceptance, now time.Time) (items []types.TransactWriteItem, sigIdx, keyIdx, msgIdx int) {
	sigIdx, keyIdx = -1, -1
	if a.Signature != nil {
		sigIdx = len(items)
		items = append(items, s.sigWrite(a.Signature, now))
	}
	if k := a.Key; k != nil {
		// Claimed and completed at once: nothing but DynamoDB runs in between.
		it := idemItemOf(k, inbound.StateCompleted)
		it.Status, it.Body, it.MessageID = a.Status, string(a.Body), a.Message.ID
		keyIdx = len(items)
		items = append(items, s.claim(it, now))
	}
	msgIdx = len(items)
	items = append(items,
		dynamo.MessagePut(s.Name, a.Message),
		dynamo.Put(s.Name, requestLogItemOf(a.Log), "attribute_not_exists(pk)", nil),
	)
	// The message's attachments, claimed at its own time.
	items = append(items, dynamo.ClaimWrites(s.Name, a.Message, a.Message.CreatedAt)...)
	return items, sigIdx, keyIdx, msgIdx
}

// Log implements inbound.Store: one PutItem, or with sig one
// TransactWriteItems that also records (or checks) the signature.
func (s *Store) Log(ctx context.Context, rec chat.RequestLog, sig *inbound.SignatureUse, now time.Time) (inbound.Outcome, error) {
	if sig != nil {
		// The record's id is this request's own: nothing else writes it.
		reasons, err := s.Transact(ctx, "put request log", []types.TransactWriteItem{
			s.sigWrite(sig, now), dynamo.Put(s.Name, requestLogItemOf(rec), "", nil),
		})
		switch {
		case chat.IsCode(err, chat.EConflict):
			return 0, chat.Unavailable(err)
		case err != nil:
			return 0, err
		case reasons == nil:
			return inbound.Written, nil
		case dynamo.ConditionFailed(reasons, 0):
			return inbound.SignatureUsed, nil
		}
		return 0, chat.Internal(fmt.Errorf("dynamo: put request log cancelled for an unexpected reason: %s", dynamo.ReasonCodes(reasons)))
	}
	av, err := attributevalue.MarshalMap(requestLogItemOf(rec))
	if err != nil {
		return 0, chat.Internal(err)
	}
	_, err = s.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.Name, Item: av, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return inbound.Written, nil
	}
	if err != nil {
		return 0, dynamo.Fail("put request log", err)
	}
	return inbound.Written, nil
}

// RequestLogs lists a webhook's request log newest first with one Query
// (listPage).
func (s *Store) RequestLogs(ctx context.Context, ws, webhook, after string, limit int) (chat.Page[chat.RequestLog], error) {
	q := dynamo.ListQuery{Op: "list request log", PK: reqLogPK(ws, webhook), Prefix: "REQ#"}
	return dynamo.ListPage(ctx, s.Table, q, after, limit, func(it requestLogItem) chat.RequestLog {
		return chat.RequestLog{ID: it.ID, WorkspaceID: it.WorkspaceID, WebhookID: it.WebhookID,
			ReceivedAt: it.ReceivedAt, Status: it.Status, Outcome: it.Outcome, ErrorCode: it.ErrorCode, MessageID: it.MessageID,
			IdempotencyKey: it.IdempotencyKey, AuthScheme: it.AuthScheme, SourceIP: it.SourceIP, UserAgent: it.UserAgent,
			BodyBytes: it.BodyBytes, DurationMS: it.DurationMS}
	})
}

// InboundWebhookOf returns the inbound webhook id in workspace ws, with one
// GetItem. Errors: ENotFound when it does not exist there.
func (s *Store) InboundWebhookOf(ctx context.Context, ws, id string) error {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Name, Key: dynamo.Key(dynamo.InboundPK(id), dynamo.MetaSK),
		ProjectionExpression: aws.String("workspace_id")})
	if err != nil {
		return dynamo.Fail("get inbound webhook", err)
	}
	if out.Item == nil || dynamo.GetS(out.Item, "workspace_id") != ws {
		return chat.Errorf(chat.ENotFound, "The webhook does not exist.")
	}
	return nil
}

// RewriteLog implements inbound.LogRewriter with one PutItem that replaces
// record rec.ID (written before its request's outcome was known).
// Errors: EUnavailable.
func (s *Store) RewriteLog(ctx context.Context, rec chat.RequestLog) error {
	av, err := attributevalue.MarshalMap(requestLogItemOf(rec))
	if err != nil {
		return chat.Internal(err)
	}
	_, err = s.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.Name, Item: av})
	return dynamo.Fail("rewrite request log "+rec.ID, err)
}

// Admit implements inbound.ChangeLogger with one TransactWriteItems: the
// request log record rec (written before the change it logs is applied),
// sig's use when set (as Log), key's claim in progress when set (as
// Accept's, which returns the record that holds the key). A resend of the transaction after it committed
// finds its own log record: Written.
func (s *Store) Admit(ctx context.Context, rec chat.RequestLog, sig *inbound.SignatureUse, key *inbound.KeyUse, now time.Time) (inbound.Outcome, inbound.Record, error) {
	sigIdx, keyIdx := -1, -1
	var items []types.TransactWriteItem
	if sig != nil {
		sigIdx = len(items)
		items = append(items, s.sigWrite(sig, now))
	}
	if key != nil {
		keyIdx = len(items)
		items = append(items, s.claim(idemItemOf(key, inbound.StateInProgress), now))
	}
	logIdx := len(items)
	// The record's id is this request's own: only a resend of this very
	// transaction, which committed though its answer was lost, meets it.
	logPut := dynamo.Put(s.Name, requestLogItemOf(rec), "attribute_not_exists(pk)", nil)
	items = append(items, logPut)
	reasons, err := s.Transact(ctx, "admit inbound change", items)
	switch {
	case chat.IsCode(err, chat.EConflict) && key != nil:
		return 0, inbound.Record{}, keyInUse(err)
	case chat.IsCode(err, chat.EConflict):
		return 0, inbound.Record{}, chat.Unavailable(err)
	case err != nil:
		return 0, inbound.Record{}, err
	case reasons == nil, dynamo.ConditionFailed(reasons, logIdx):
		return inbound.Written, inbound.Record{}, nil
	case sigIdx >= 0 && dynamo.ConditionFailed(reasons, sigIdx):
		return inbound.SignatureUsed, inbound.Record{}, nil
	case keyIdx >= 0 && dynamo.ConditionFailed(reasons, keyIdx):
		held, err := heldRecord(reasons[keyIdx].Item)
		if err != nil {
			return 0, inbound.Record{}, err
		}
		return inbound.KeyHeld, held, nil
	}
	return 0, inbound.Record{}, chat.Internal(fmt.Errorf("dynamo: admit inbound change cancelled for an unexpected reason: %s", dynamo.ReasonCodes(reasons)))
}

// ownedBy is the condition that a claim is still in progress and held by
// owner.
func ownedBy(owner string) (string, map[string]string, map[string]types.AttributeValue) {
	return "#st = :inprog AND #o = :owner", map[string]string{"#st": "state", "#o": "owner"},
		map[string]types.AttributeValue{":inprog": dynamo.Str(inbound.StateInProgress), ":owner": dynamo.Str(owner)}
}

// CompleteKey implements inbound.ChangeLogger with one PutItem of the
// completed record, on condition that key.Owner still holds the claim (a
// claim that lapsed and was taken over is left to its new owner).
func (s *Store) CompleteKey(ctx context.Context, key inbound.KeyUse, status int, messageID string, m *chat.Message) error {
	it := idemItemOf(&key, inbound.StateCompleted)
	it.Status, it.MessageID = status, messageID
	if m != nil {
		mi := dynamo.MessageItemOf(*m)
		// The message as the edit left it: its revision and edit time,
		// which MessageItemOf (a new message's item) leaves out.
		mi.Revision, mi.PendingShard, mi.PendingDue = m.Revision, "", ""
		if !m.EditedAt.IsZero() {
			t := m.EditedAt
			mi.EditedAt = &t
		}
		it.Message = &mi
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return chat.Internal(err)
	}
	cond, names, vals := ownedBy(key.Owner)
	return writeClaim(ctx, "complete idempotency record", func() error {
		_, err := s.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.Name, Item: av, ConditionExpression: &cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: vals})
		return err
	})
}

// ReleaseKey implements inbound.ChangeLogger with one DeleteItem of the
// claim, on condition that key.Owner still holds it.
func (s *Store) ReleaseKey(ctx context.Context, key inbound.KeyUse) error {
	cond, names, vals := ownedBy(key.Owner)
	return writeClaim(ctx, "release idempotency claim", func() error {
		_, err := s.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.Name, Key: dynamo.Key(idemPK(key.WebhookID, key.KeyHash), dynamo.MetaSK),
			ConditionExpression: &cond, ExpressionAttributeNames: names, ExpressionAttributeValues: vals})
		return err
	})
}

// ReleaseSignature implements inbound.ChangeLogger with one DeleteItem of
// sig's record, on condition that it is the use this signature's requests
// record (its expiry: a record of an older use past its window may be
// replaced by then).
func (s *Store) ReleaseSignature(ctx context.Context, sig inbound.SignatureUse) error {
	cond := "expires_epoch = :exp"
	vals := map[string]types.AttributeValue{":exp": dynamo.Num(dynamo.Epoch(sig.ExpiresAt))}
	return writeClaim(ctx, "release signature use", func() error {
		_, err := s.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.Name, Key: dynamo.Key(sigPK(sig.WebhookID, sig.Hash), dynamo.MetaSK),
			ConditionExpression: &cond, ExpressionAttributeValues: vals})
		return err
	})
}

// writeClaim runs write, a conditional write of a claim its owner holds: a
// failed condition means the claim lapsed and another request took it over
// (nothing to do). DynamoDB refuses the write while another request's
// transaction claiming the same key is in flight
// (TransactionConflictException): it is sent again after a short pause, as
// long as those keep coming, within the request's time.
func writeClaim(ctx context.Context, op string, write func() error) error {
	for attempt := 0; ; attempt++ {
		err := write()
		var ccf *types.ConditionalCheckFailedException
		var tce *types.TransactionConflictException
		switch {
		case errors.As(err, &ccf):
			return nil
		case !errors.As(err, &tce) || attempt >= 7:
			return dynamo.Fail(op, err)
		}
		backoff := time.Duration(10<<attempt)*time.Millisecond + time.Duration(rand.IntN(20))*time.Millisecond
		select {
		case <-ctx.Done():
			return dynamo.Fail(op, ctx.Err())
		case <-time.After(backoff):
		}
	}
}

var _ inbound.MessageLocator = (*Store)(nil)

// WebhookMessageChannel implements inbound.MessageLocator: one
// BatchGetItem of the message's key in each channel (per 100 channels), a
// key read in each, which finds the one channel holding the id.
func (s *Store) WebhookMessageChannel(ctx context.Context, webhookID, messageID string, channels []string) (string, error) {
	for start := 0; start < len(channels); start += dynamo.TranslationBatch {
		keys := make([]map[string]types.AttributeValue, 0, dynamo.TranslationBatch)
		for _, ch := range channels[start:min(start+dynamo.TranslationBatch, len(channels))] {
			keys = append(keys, dynamo.Key(dynamo.ChanPK(ch), dynamo.MessageSK(messageID)))
		}
		items, err := s.BatchGet(ctx, "find message "+messageID, keys)
		if err != nil {
			return "", err
		}
		for _, it := range items {
			var m dynamo.MessageItem
			if err := attributevalue.UnmarshalMap(it, &m); err != nil {
				return "", chat.Internal(fmt.Errorf("dynamo: find message %s: %w", messageID, err))
			}
			if m.ID == messageID && m.Author.Type == chat.AuthorBot && m.Author.ID == webhookID {
				return m.ChannelID, nil
			}
		}
	}
	return "", nil
}
