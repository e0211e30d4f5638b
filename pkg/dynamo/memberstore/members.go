package memberstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/members"
)

var (
	_ members.ChannelStore = (*Store)(nil)
	_ members.PostStore    = (*Store)(nil)
)

// memberKeyPK is a member's Idempotency-Key record.
func memberKeyPK(user, keyHash string) string { return "UIDEM#" + user + "#" + keyHash }

// memberKeyItem is a member's Idempotency-Key record: pk
// UIDEM#<user>#<sha256(key)>, sk #META. It holds the message it posted, so
// that a replay needs no other read.
type memberKeyItem struct {
	PK          string             `dynamodbav:"pk"`
	SK          string             `dynamodbav:"sk"`
	Fingerprint string             `dynamodbav:"fingerprint"`
	Expires     int64              `dynamodbav:"expires_epoch"`
	TTL         int64              `dynamodbav:"ttl"`
	Message     dynamo.MessageItem `dynamodbav:"message"`
}

// MemberChannels implements members.ChannelStore with one Query of the
// user's channel list, oldest first. Errors: EValidation on "cursor" for a
// position that is not a channel's; EUnavailable.
func (s *Store) MemberChannels(ctx context.Context, ws, user, after string, limit int) (chat.Page[members.Channel], error) {
	q := dynamo.ListQuery{Op: "list channels of user " + user, PK: dynamo.MemberPK(ws, user), Prefix: "CHAN#", Forward: true}
	return dynamo.ListPage(ctx, s.Table, q, after, limit, func(it dynamo.MemberChannelItem) members.Channel {
		return members.Channel{ID: it.ID, WorkspaceID: it.WorkspaceID, Name: it.Name, CreatedAt: it.CreatedAt}
	})
}

// PostMemberMessage implements members.PostStore. Without a key it is one
// PutItem of the message; with one, one TransactWriteItems of the message
// and the key's record, the record conditioned on no live record holding
// the key: a failed condition returns that record (ReturnValues ALL_OLD),
// so a replay costs no further read. A transaction that collides with a
// concurrent one on the key is retried a few times (the winner's record is
// then returned), then answered EIdempotencyKeyInUse. A transaction that
// committed though its answer was lost, and that the SDK sent again, meets
// its own record and message (they hold m): it is stored, not a replay.
// A reply also counts itself on its root in the same write (PutMessage,
// dynamo.ThreadWrite); a root that refuses it answers EValidation on
// "thread_id".
func (s *Store) PostMemberMessage(ctx context.Context, m chat.Message, key *members.KeyRecord, now time.Time) (*members.KeyRecord, error) {
	if key == nil {
		return nil, s.PutMessage(ctx, m)
	}
	// The key record, the message, then the claims of its attachments.
	const firstClaim = 2
	rec := memberKeyItem{
		PK: memberKeyPK(key.UserID, key.KeyHash), SK: dynamo.MetaSK, Fingerprint: key.Fingerprint,
		Expires: dynamo.Epoch(key.ExpiresAt), TTL: dynamo.Epoch(key.ExpiresAt.Add(time.Hour)), Message: dynamo.MessageItemOf(m),
	}
	claim := dynamo.Put(s.Name, rec, "attribute_not_exists(pk) OR expires_epoch <= :now", map[string]types.AttributeValue{":now": dynamo.Num(now.Unix())})
	claim.Put.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	items := append([]types.TransactWriteItem{claim, dynamo.MessagePut(s.Name, m)}, dynamo.ClaimWrites(s.Name, m, m.CreatedAt)...)
	// A reply's root is last (dynamo.ThreadWrite).
	rootIdx, advance := -1, true
	if m.ThreadID != "" {
		rootIdx = len(items)
		items = append(items, dynamo.ThreadWrite(s.Name, m, advance))
	}
	attempts := 4
	if rootIdx >= 0 {
		// Replies to one root collide on it.
		attempts = dynamo.ReplyRounds
	}
	op := "post member message " + m.ID
	for attempt := 0; ; attempt++ {
		_, err := s.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil {
			return nil, nil
		}
		reasons := dynamo.Cancellation(err)
		switch {
		case reasons == nil:
			return nil, dynamo.Fail(op, err)
		case dynamo.ConditionFailed(reasons, 1) && dynamo.OwnMessage(reasons[1].Item, m):
			return nil, nil
		case dynamo.ConditionFailed(reasons, 0):
			var old memberKeyItem
			if err := attributevalue.UnmarshalMap(reasons[0].Item, &old); err != nil {
				return nil, chat.Internal(fmt.Errorf("dynamo: %s: held record: %w", op, err))
			}
			return &members.KeyRecord{
				UserID: key.UserID, KeyHash: key.KeyHash, Fingerprint: old.Fingerprint,
				ExpiresAt: time.Unix(old.Expires, 0).UTC(), Message: old.Message.Message(),
			}, nil
		case dynamo.ConditionFailed(reasons, 1):
			return nil, chat.Errorf(chat.EConflict, "message %s exists", m.ID)
		case rootIdx >= 0 && dynamo.ConditionFailed(reasons, rootIdx):
			if err := dynamo.ThreadRefusal(reasons[rootIdx].Item); err != nil || !advance {
				if err == nil {
					err = chat.Unavailable(errors.New("dynamo: " + op + ": thread root refused the reply"))
				}
				return nil, err
			}
			// The root's last reply is newer: count this one, leave it.
			advance = false
			items[rootIdx] = dynamo.ThreadWrite(s.Name, m, advance)
			continue
		case dynamo.ClaimFailure(reasons, firstClaim, m) != nil:
			return nil, dynamo.ClaimFailure(reasons, firstClaim, m)
		case !dynamo.Conflicted(reasons):
			return nil, chat.Internal(errors.New("dynamo: " + op + ": cancelled for an unexpected reason"))
		}
		if attempt >= attempts {
			e := chat.Errorf(chat.EIdempotencyKeyInUse, "A request with this Idempotency-Key is still being processed. Retry later.")
			e.RetryAfter = 1
			return nil, e
		}
		backoff := time.Duration(10<<min(attempt, 4))*time.Millisecond + time.Duration(rand.IntN(20))*time.Millisecond
		if rootIdx >= 0 {
			backoff += time.Duration(rand.IntN(300)) * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return nil, dynamo.Fail(op, ctx.Err())
		case <-time.After(backoff):
		}
	}
}
