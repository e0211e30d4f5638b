package translationstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/translation"
)

var _ translation.BudgetStore = (*Store)(nil)

// attrBudget is the workspace item's translation_chars_per_day, and
// attrSpent the daily counter item's count of characters.
const (
	attrBudget = "translation_chars_per_day"
	attrSpent  = "chars"
)

// budgetPK is the partition of a workspace's counter of translated
// characters on one UTC day (2006-01-02).
func budgetPK(ws string, day time.Time) string {
	return "TRBUDGET#" + ws + "#" + day.Format(time.DateOnly)
}

// TranslationBudget implements translation.BudgetStore with one GetItem of
// the workspace item, projected to its budget. A workspace applied before
// the budget existed, or not stored at all, has
// chat.DefaultTranslationCharsPerDay. Errors: chat.EUnavailable, chat.EInternal.
func (s *Store) TranslationBudget(ctx context.Context, ws string) (int64, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                &s.Name,
		Key:                      dynamo.Key(dynamo.WsPK(ws), dynamo.MetaSK),
		ProjectionExpression:     aws.String("#b"),
		ExpressionAttributeNames: map[string]string{"#b": attrBudget},
	})
	if err != nil {
		return 0, dynamo.Fail("get translation budget of "+ws, err)
	}
	n, ok := out.Item[attrBudget].(*types.AttributeValueMemberN)
	if !ok {
		return chat.DefaultTranslationCharsPerDay, nil
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, chat.Internal(fmt.Errorf("dynamo: translation budget of %s: %w", ws, err))
	}
	return v, nil
}

// budgetPerShard is the most characters a shard of a day's budget may
// count (unless the day has dynamo.MaxCounterShards): the default budget
// (2,000,000) has 8 shards, 4,000,000 and more have 16, which take 16,000
// spends a second.
const budgetPerShard = 250_000

// budgetCounter is the workspace's counter of day's translated characters,
// limit split over its shards; it expires (TTL) a day after the day ends.
func budgetCounter(ws string, day time.Time, limit int64) dynamo.ShardedCounter {
	y, m, d := day.UTC().Date()
	start := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return dynamo.ShardedCounter{Base: budgetPK(ws, start), Attr: attrSpent, Limit: limit,
		Shards: dynamo.CounterShards(limit, budgetPerShard), TTL: dynamo.Epoch(start.Add(48 * time.Hour))}
}

// SpendTranslationChars implements translation.BudgetStore with one
// conditional UpdateItem of a random shard of the day's counter
// (dynamo.Table.Spend): ADD chars on condition that the shard stays within
// its share of limit, so concurrent spenders can never take the day past
// limit together. Only when that shard is full does it read every shard
// (BatchGetItem) and spend on another, or on several in one
// TransactWriteItems; a spend this instance knows cannot fit makes no call,
// nor does chars > limit. Errors: chat.EUnavailable, chat.EInternal.
func (s *Store) SpendTranslationChars(ctx context.Context, ws string, day time.Time, chars, limit int64) (bool, error) {
	spent, err := s.spend(ctx, ws, day, chars, limit)
	return spent.OK, err
}

// spend is SpendTranslationChars, with where it counted.
func (s *Store) spend(ctx context.Context, ws string, day time.Time, chars, limit int64) (dynamo.Spent, error) {
	if chars > limit || chars <= 0 {
		return dynamo.Spent{OK: chars <= 0}, nil
	}
	return s.Spend(ctx, budgetCounter(ws, day, limit), chars, &s.budgetSeen)
}

var _ translation.OnceSpender = (*Store)(nil)

// chargeSK is the sort key of the record that a message's revision has
// been charged, beside its translations (MSG#<message>).
func chargeSK(charge string) string { return "CHARGE#" + charge }

// SpendTranslationCharsOnce implements translation.OnceSpender without a
// transaction, which concurrent spenders of one workspace would cancel for
// each other on its counter: the counter's spend (as
// SpendTranslationChars), then a PutItem of the charge record
// MSG#<message>/CHARGE#<revision> on condition that it does not exist.
// charge is "<message id>#<revision>". When the record was already there,
// the revision had been charged: the characters go back to the shards they
// were spent on (an UpdateItem each, dynamo.Table.GiveBack), and the answer
// is true. A spend past the budget writes no record, so a
// later attempt within it is charged. A failure between the writes can
// only count a revision twice, never fail to count it. The record expires
// (TTL) with the counter.
func (s *Store) SpendTranslationCharsOnce(ctx context.Context, ws string, day time.Time, chars, limit int64, charge string) (bool, error) {
	msg, rev, ok := strings.Cut(charge, "#")
	if !ok || msg == "" || rev == "" {
		return false, chat.Internal(fmt.Errorf("dynamo: charge %q is not <message>#<revision>", charge))
	}
	if chars > limit {
		return s.charged(ctx, msg, rev)
	}
	spent, err := s.spend(ctx, ws, day, chars, limit)
	if err != nil || !spent.OK {
		if err == nil {
			// Past the budget; still, a revision charged before may go on.
			return s.charged(ctx, msg, rev)
		}
		return false, err
	}
	c := budgetCounter(ws, day, limit)
	record := dynamo.Key(dynamo.TranslationPK(msg), chargeSK(rev))
	record["chars"] = dynamo.Num(chars)
	record["workspace_id"] = dynamo.Str(ws)
	record[dynamo.AttrTTL] = dynamo.Num(c.TTL)
	_, err = s.Client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           &s.Name,
		Item:                record,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		// Charged before: give back what was just spent, to the shards
		// it was spent on.
		if err := s.GiveBack(ctx, c, spent.Pieces, &s.budgetSeen); err != nil {
			return false, err
		}
		return true, nil
	}
	if err != nil {
		return false, dynamo.Fail("record the charge of "+charge, err)
	}
	return true, nil
}

// charged reports whether the revision's charge record exists: one
// consistent GetItem.
func (s *Store) charged(ctx context.Context, msg, rev string) (bool, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.Name, Key: dynamo.Key(dynamo.TranslationPK(msg), chargeSK(rev)),
		ProjectionExpression: aws.String("pk"), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return false, dynamo.Fail("charge of message "+msg, err)
	}
	return out.Item != nil, nil
}
