package dynamo

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
)

// attrLastReplyNS is a root's last_reply_at in Unix nanoseconds, the
// number its write compares so that last_reply_at never moves backwards
// (the stored RFC 3339 strings do not sort within a second).
const attrLastReplyNS = "last_reply_ns"

// The answers on "thread_id" to a reply whose root cannot take it.
const (
	ThreadUnknown = "The thread id does not name a message of this channel."
	ThreadDeleted = "The thread's root message was deleted."
)

// ThreadRoot implements messages.ThreadReader with one consistent GetItem
// of message id in channelID: the id itself for a root, its root's for a
// reply. Errors: EValidation on "thread_id" when no such message is in the
// channel or it is a deleted root; EUnavailable.
func (s *Table) ThreadRoot(ctx context.Context, channelID, id string) (string, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.Name, Key: Key(ChanPK(channelID), MessageSK(id)), ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#t, #d"),
		ExpressionAttributeNames: map[string]string{"#t": AttrThreadID, "#d": AttrDeletedAt},
	})
	if err != nil {
		return "", Fail("get thread root "+id, err)
	}
	if out.Item == nil {
		return "", chat.FieldError("thread_id", ThreadUnknown)
	}
	if root := GetS(out.Item, AttrThreadID); root != "" {
		return root, nil
	}
	if _, deleted := out.Item[AttrDeletedAt]; deleted {
		return "", chat.FieldError("thread_id", ThreadDeleted)
	}
	return id, nil
}

// ThreadWrite is the update of reply m's root in the transaction that puts
// m: one more reply (ADD reply_count 1) and, when advance, last_reply_at
// set to m's creation, on condition that the root is in m's channel, not
// deleted and a root; with advance, also that its last reply is older than
// m (else it is sent again without advance). It removes the root's outbox
// mark, so that its MODIFY is not taken for an edit again. A failed
// condition returns the root (ALL_OLD) for ThreadRefusal.
func ThreadWrite(table string, m chat.Message, advance bool) types.TransactWriteItem {
	names := map[string]string{"#rc": AttrReplyCount, "#del": AttrDeletedAt, "#tid": AttrThreadID, "#ob": AttrOutbox}
	values := map[string]types.AttributeValue{":one": Num(1)}
	update := "ADD #rc :one REMOVE #ob"
	cond := "attribute_exists(pk) AND attribute_not_exists(#del) AND attribute_not_exists(#tid)"
	if advance {
		names["#lr"], names["#ln"] = AttrLastReplyAt, attrLastReplyNS
		values[":at"] = &types.AttributeValueMemberS{Value: m.CreatedAt.UTC().Format(time.RFC3339Nano)}
		values[":ns"] = Num(m.CreatedAt.UnixNano())
		update = "SET #lr = :at, #ln = :ns " + update
		cond += " AND (attribute_not_exists(#ln) OR #ln < :ns)"
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(table), Key: Key(ChanPK(m.ChannelID), MessageSK(m.ThreadID)),
		UpdateExpression: aws.String(update), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}
}

// ThreadRefusal tells why root, the old image of a reply's root whose
// condition failed (ThreadWrite), refused it: an EValidation on
// "thread_id", or nil when the root takes the reply and only its last
// reply is newer (send the write again without advance).
func ThreadRefusal(root map[string]types.AttributeValue) error {
	switch {
	case len(root) == 0:
		return chat.FieldError("thread_id", ThreadUnknown)
	case GetS(root, AttrThreadID) != "":
		return chat.FieldError("thread_id", "The thread id names a reply, not a thread's root.")
	}
	if _, deleted := root[AttrDeletedAt]; deleted {
		return chat.FieldError("thread_id", ThreadDeleted)
	}
	return nil
}

// ReplyRounds is how many more times a reply's transaction that keeps
// colliding is sent, after Transact's own attempts, with spread-out
// pauses: a burst of replies into one thread collides on its root.
const ReplyRounds = 12

// ClaimRounds is those rounds for a post's uploads' claims.
const ClaimRounds = 3

// ContestedRounds is the rounds of TransactClaims for new message m's
// transaction: its items another request may write at once are its
// uploads' claims and a reply's root.
func ContestedRounds(m chat.Message) int {
	switch {
	case m.ThreadID != "":
		return ReplyRounds
	case len(m.Attachments) > 0:
		return ClaimRounds
	}
	return 0
}

// TransactPost runs the transaction of new message m that build makes,
// given the write of a reply's root (nil for a root; build appends it and
// returns its index, -1 without it) and the index of m's put. A refused
// root answers an EValidation on "thread_id"; a root whose last reply is
// newer than m is written again without moving last_reply_at. Otherwise it
// returns what TransactClaims does.
func (s *Table) TransactPost(ctx context.Context, op string, m chat.Message, build func(root *types.TransactWriteItem) (items []types.TransactWriteItem, msgIdx, rootIdx int)) ([]types.CancellationReason, error) {
	advance := true
	for {
		var root *types.TransactWriteItem
		if m.ThreadID != "" {
			w := ThreadWrite(s.Name, m, advance)
			root = &w
		}
		items, msgIdx, rootIdx := build(root)
		reasons, err := s.TransactClaims(ctx, op, items, ContestedRounds(m))
		if err != nil || reasons == nil || rootIdx < 0 || !ConditionFailed(reasons, rootIdx) || ConditionFailed(reasons, msgIdx) {
			return reasons, err
		}
		if err := ThreadRefusal(reasons[rootIdx].Item); err != nil || !advance {
			if err == nil {
				err = chat.Unavailable(errors.New("dynamo: " + op + ": thread root refused the reply"))
			}
			return nil, err
		}
		advance = false
	}
}

// replyPause is a spread-out pause before a reply's transaction is sent
// again.
func replyPause() time.Duration { return time.Duration(50+rand.IntN(450)) * time.Millisecond }
