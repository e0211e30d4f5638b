package reactionstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/reactions"
)

// Key prefixes and attribute names of the reaction items.
const (
	// ReaderPrefix starts a reader item's partition key.
	ReaderPrefix = "RXR#"
	// ShardPrefix starts a count shard's partition key.
	ShardPrefix = "RXC#"
	// CountAttrPrefix starts a shard's per-emoji count attribute.
	CountAttrPrefix = "n:"
	// ShardSK is the sort key of a count shard.
	ShardSK = "C"
	// ReaderBuckets is how many partitions a message's reader items are
	// spread over.
	ReaderBuckets = 16
	attrEmoji     = "emoji"
)

// ReaderPK is the partition key of owner's reader item on a message.
func ReaderPK(messageID, owner string) string {
	h := fnv.New32a()
	h.Write([]byte(owner))
	return fmt.Sprintf("%s%s#%02d", ReaderPrefix, messageID, h.Sum32()%ReaderBuckets)
}

// ShardPK is the partition key of count shard k of a message.
func ShardPK(messageID string, k int) string {
	return ShardPrefix + messageID + "#" + strconv.Itoa(k)
}

// shardsOf is the number of count shards of m (absent reads as 1).
func shardsOf(m chat.Message) int { return min(max(m.ReactionShards, 1), reactions.MaxShards) }

// Add adds r (reactions.Store.Apply); added is false when it was there.
func (s *Store) Add(ctx context.Context, r reactions.Reaction) (added bool, err error) {
	o, err := s.Apply(ctx, r, true)
	return o.Changed, err
}

// Remove removes r; removed is false when it was not there.
func (s *Store) Remove(ctx context.Context, r reactions.Reaction) (removed bool, err error) {
	o, err := s.Apply(ctx, r, false)
	return o.Changed, err
}

// message reads the message of r consistently: ENotFound when absent or
// of another channel, EMessageDeleted when deleted, r.Check's error.
func (s *Store) message(ctx context.Context, r reactions.Reaction) (chat.Message, error) {
	out, err := s.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Name),
		Key: dynamo.Key(dynamo.ChanPK(r.ChannelID), dynamo.MessageSK(r.MessageID)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return chat.Message{}, dynamo.Fail("get message", err)
	}
	if len(out.Item) == 0 {
		return chat.Message{}, chat.Errorf(chat.ENotFound, "Message not found.")
	}
	var it dynamo.MessageItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return chat.Message{}, chat.Internal(fmt.Errorf("dynamo: unmarshal message: %w", err))
	}
	m := it.Message()
	if m.ChannelID != r.ChannelID || (r.WorkspaceID != "" && m.WorkspaceID != r.WorkspaceID) {
		return chat.Message{}, chat.Errorf(chat.ENotFound, "Message not found.")
	}
	if !m.DeletedAt.IsZero() {
		return chat.Message{}, chat.Errorf(chat.EMessageDeleted, "The message was deleted.")
	}
	if r.Check != nil {
		if err := r.Check(m); err != nil {
			return chat.Message{}, err
		}
	}
	return m, nil
}

func contains(list []string, e string) bool {
	for _, x := range list {
		if x == e {
			return true
		}
	}
	return false
}

// errFull is the 422 of a message with chat.MaxReactionEmoji distinct emoji.
func errFull() error {
	return chat.FieldError("emoji", fmt.Sprintf("A message takes at most %d distinct emoji.", chat.MaxReactionEmoji))
}

// Apply implements reactions.Store: the read of the message, the
// registration of a new emoji on it (Add only), then one transaction of
// the reader item and a random count shard, retried on conflict with a
// fresh shard (and more shards after a conflict).
func (s *Store) Apply(ctx context.Context, r reactions.Reaction, add bool) (reactions.Outcome, error) {
	m, err := s.message(ctx, r)
	if err != nil {
		return reactions.Outcome{}, err
	}
	if !contains(m.ReactionEmoji, r.Emoji) {
		if !add {
			// Never registered: nobody reacted with it.
			return reactions.Outcome{Message: m}, nil
		}
		if m, err = s.register(ctx, r, m, true); err != nil {
			return reactions.Outcome{}, err
		}
	}
	for attempt := 0; ; attempt++ {
		k := rand.IntN(shardsOf(m))
		_, err := s.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: s.writes(r, k, add)})
		if err == nil {
			return reactions.Outcome{Changed: true, Message: m}, nil
		}
		reasons := dynamo.Cancellation(err)
		if reasons == nil {
			return reactions.Outcome{}, dynamo.Fail("transact reaction", err)
		}
		if dynamo.ConditionFailed(reasons, 0) {
			return reactions.Outcome{Message: m}, nil
		}
		throttled := dynamo.Throttled(reasons)
		if !throttled && !dynamo.Conflicted(reasons) {
			return reactions.Outcome{}, chat.Internal(fmt.Errorf("dynamo: transact reaction: %s", dynamo.ReasonCodes(reasons)))
		}
		if attempt >= maxAttempts {
			return reactions.Outcome{}, chat.Unavailable(fmt.Errorf("dynamo: transact reaction: %s after %d attempts", dynamo.ReasonCodes(reasons), attempt+1))
		}
		if !throttled && shardsOf(m) < reactions.MaxShards {
			m.ReactionShards = s.grow(ctx, r, shardsOf(m))
		}
		// Spread the retries out: the readers that collided on a shard
		// must not come back together.
		pause := time.Duration(5+rand.IntN(20<<min(attempt, 4))) * time.Millisecond
		select {
		case <-ctx.Done():
			return reactions.Outcome{}, dynamo.Fail("transact reaction", ctx.Err())
		case <-time.After(pause):
		}
	}
}

// maxAttempts bounds the retries of a reaction's transaction.
const maxAttempts = 12

// writes is the transaction of r on count shard k.
func (s *Store) writes(r reactions.Reaction, k int, add bool) []types.TransactWriteItem {
	author, _ := dynamo.AuthorValue(r.Author)
	ids := map[string]types.AttributeValue{":m": dynamo.Str(r.MessageID), ":c": dynamo.Str(r.ChannelID), ":w": dynamo.Str(r.WorkspaceID)}
	one := &types.AttributeValueMemberSS{Value: []string{r.Emoji}}
	reader := &types.Update{TableName: aws.String(s.Name), Key: dynamo.Key(ReaderPK(r.MessageID, r.Owner), r.Owner),
		ExpressionAttributeNames: map[string]string{"#e": attrEmoji, "#mid": "message_id", "#cid": "channel_id", "#wid": "workspace_id",
			"#o": "owner", "#a": "author", "#u": "updated_at"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":e": dynamo.Str(r.Emoji), ":set": one, ":o": dynamo.Str(r.Owner),
			":u": dynamo.Str(r.Now.Format(time.RFC3339Nano)), ":m": ids[":m"], ":c": ids[":c"], ":w": ids[":w"]}}
	set := "SET #mid = :m, #cid = :c, #wid = :w, #o = :o, #u = :u"
	if author != nil {
		reader.ExpressionAttributeValues[":a"] = author
		set += ", #a = :a"
	}
	delta := int64(-1)
	if add {
		delta = 1
		reader.UpdateExpression = aws.String(set + " ADD #e :set")
		reader.ConditionExpression = aws.String("attribute_not_exists(#e) OR NOT contains(#e, :e)")
	} else {
		reader.UpdateExpression = aws.String(set + " DELETE #e :set")
		reader.ConditionExpression = aws.String("contains(#e, :e)")
	}
	shard := &types.Update{TableName: aws.String(s.Name), Key: dynamo.Key(ShardPK(r.MessageID, k), ShardSK),
		UpdateExpression:         aws.String("SET #mid = :m, #cid = :c, #wid = :w ADD #n :d"),
		ExpressionAttributeNames: map[string]string{"#mid": "message_id", "#cid": "channel_id", "#wid": "workspace_id", "#n": CountAttrPrefix + r.Emoji},
		ExpressionAttributeValues: map[string]types.AttributeValue{":m": ids[":m"], ":c": ids[":c"], ":w": ids[":w"],
			":d": dynamo.Num(delta)}}
	return []types.TransactWriteItem{{Update: reader}, {Update: shard}}
}

// register appends r.Emoji to the message's reaction_emoji. A full list is
// pruned of the emoji whose count is 0 once (prune), then tried again.
func (s *Store) register(ctx context.Context, r reactions.Reaction, m chat.Message, prune bool) (chat.Message, error) {
	key := dynamo.Key(dynamo.ChanPK(r.ChannelID), dynamo.MessageSK(r.MessageID))
	names := map[string]string{"#pk": dynamo.AttrPK, "#del": dynamo.AttrDeletedAt, "#re": dynamo.AttrReactionEmoji}
	values := map[string]types.AttributeValue{":empty": &types.AttributeValueMemberL{Value: []types.AttributeValue{}},
		":one": &types.AttributeValueMemberL{Value: []types.AttributeValue{dynamo.Str(r.Emoji)}},
		":e":   dynamo.Str(r.Emoji), ":max": dynamo.Num(chat.MaxReactionEmoji)}
	for attempt := 0; ; attempt++ {
		_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.Name), Key: key,
			UpdateExpression: aws.String("SET #re = list_append(if_not_exists(#re, :empty), :one)"),
			ConditionExpression: aws.String("attribute_exists(#pk) AND attribute_not_exists(#del) AND " +
				"(attribute_not_exists(#re) OR (NOT contains(#re, :e) AND size(#re) < :max))"),
			ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
		if err == nil {
			m.ReactionEmoji = append(append([]string(nil), m.ReactionEmoji...), r.Emoji)
			return m, nil
		}
		if dynamo.AgainAfterConflict(ctx, err, attempt) {
			continue
		}
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			return m, dynamo.Fail("register reaction emoji", err)
		}
		if len(ccf.Item) == 0 {
			return m, chat.Errorf(chat.ENotFound, "Message not found.")
		}
		var it dynamo.MessageItem
		if err := attributevalue.UnmarshalMap(ccf.Item, &it); err != nil {
			return m, chat.Internal(fmt.Errorf("dynamo: unmarshal message: %w", err))
		}
		now := it.Message()
		switch {
		case !now.DeletedAt.IsZero():
			return m, chat.Errorf(chat.EMessageDeleted, "The message was deleted.")
		case contains(now.ReactionEmoji, r.Emoji):
			return now, nil
		case !prune:
			return m, errFull()
		}
		pruned, err := s.prune(ctx, r, now)
		if err != nil {
			return m, err
		}
		return s.register(ctx, r, pruned, false)
	}
}

// prune drops the emoji whose total count is 0 from the message's
// reaction_emoji, conditioned on the list being as read. It returns m as
// it is after (m unchanged when nothing could be dropped or the list
// changed meanwhile: the next registration reads it again).
func (s *Store) prune(ctx context.Context, r reactions.Reaction, m chat.Message) (chat.Message, error) {
	counts, err := s.Counts(ctx, r.MessageID, shardsOf(m))
	if err != nil {
		return m, err
	}
	var kept []string
	for _, e := range m.ReactionEmoji {
		if counts[e] > 0 {
			kept = append(kept, e)
		}
	}
	if len(kept) == len(m.ReactionEmoji) {
		return m, errFull()
	}
	old, err := attributevalue.Marshal(m.ReactionEmoji)
	if err != nil {
		return m, chat.Internal(err)
	}
	keptAV, err := attributevalue.Marshal(append([]string{}, kept...))
	if err != nil {
		return m, chat.Internal(err)
	}
	_, err = s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.Name),
		Key:                       dynamo.Key(dynamo.ChanPK(r.ChannelID), dynamo.MessageSK(r.MessageID)),
		UpdateExpression:          aws.String("SET #re = :kept"),
		ConditionExpression:       aws.String("#re = :old"),
		ExpressionAttributeNames:  map[string]string{"#re": dynamo.AttrReactionEmoji},
		ExpressionAttributeValues: map[string]types.AttributeValue{":kept": keptAV, ":old": old}})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return m, nil
	}
	if err != nil {
		return m, dynamo.Fail("prune reaction emoji", err)
	}
	m.ReactionEmoji = kept
	return m, nil
}

// grow doubles the message's count shards from s (cap MaxShards),
// conditioned on them still being s, and returns the number to use now.
func (s *Store) grow(ctx context.Context, r reactions.Reaction, from int) int {
	to := min(from*2, reactions.MaxShards)
	cond := "attribute_exists(#pk) AND "
	values := map[string]types.AttributeValue{":to": dynamo.Num(int64(to))}
	if from == 1 {
		cond += "(attribute_not_exists(#rs) OR #rs = :from)"
	} else {
		cond += "#rs = :from"
	}
	values[":from"] = dynamo.Num(int64(from))
	_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.Name),
		Key:                                 dynamo.Key(dynamo.ChanPK(r.ChannelID), dynamo.MessageSK(r.MessageID)),
		UpdateExpression:                    aws.String("SET #rs = :to"),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            map[string]string{"#pk": dynamo.AttrPK, "#rs": dynamo.AttrReactionShards},
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	if err == nil {
		return to
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if n, ok := ccf.Item[dynamo.AttrReactionShards].(*types.AttributeValueMemberN); ok {
			if v, err := strconv.Atoi(n.Value); err == nil && v > from {
				return min(v, reactions.MaxShards)
			}
		}
	}
	// Growth is an optimisation: on any failure keep the shards we have.
	return from
}

// Counts sums the count shards 0..shards-1 of a message: one BatchGetItem.
func (s *Store) Counts(ctx context.Context, messageID string, shards int) (map[string]int, error) {
	shards = min(max(shards, 1), reactions.MaxShards)
	keys := make([]map[string]types.AttributeValue, shards)
	for k := range keys {
		keys[k] = dynamo.Key(ShardPK(messageID, k), ShardSK)
	}
	items, err := s.BatchGet(ctx, "get reaction counts", keys)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, it := range items {
		addCounts(counts, it)
	}
	return counts, nil
}

// addCounts adds a shard item's n:<emoji> numbers to counts.
func addCounts(counts map[string]int, it map[string]types.AttributeValue) {
	for name, v := range it {
		e, ok := strings.CutPrefix(name, CountAttrPrefix)
		if !ok {
			continue
		}
		if n, ok := v.(*types.AttributeValueMemberN); ok {
			if c, err := strconv.Atoi(n.Value); err == nil {
				counts[e] += c
			}
		}
	}
}

// Reactions reads the reactions of msgs as reader (an owner) sees them:
// for the messages that have ReactionEmoji and are not deleted, one
// BatchGetItem (100 keys a call) of their count shards and reader's own
// reader items. The map's key is the message id; counts listed in
// reaction_emoji order, only above zero.
func (s *Store) Reactions(ctx context.Context, reader string, msgs []chat.Message) (map[string][]chat.Reaction, error) {
	var keys []map[string]types.AttributeValue
	for _, m := range msgs {
		if len(m.ReactionEmoji) == 0 || !m.DeletedAt.IsZero() {
			continue
		}
		for k := range shardsOf(m) {
			keys = append(keys, dynamo.Key(ShardPK(m.ID, k), ShardSK))
		}
		if reader != "" {
			keys = append(keys, dynamo.Key(ReaderPK(m.ID, reader), reader))
		}
	}
	out := map[string][]chat.Reaction{}
	if len(keys) == 0 {
		return out, nil
	}
	counts := map[string]map[string]int{}
	mine := map[string]map[string]bool{}
	for start := 0; start < len(keys); start += dynamo.MaxBatchGet {
		items, err := s.BatchGet(ctx, "get reactions", keys[start:min(start+dynamo.MaxBatchGet, len(keys))])
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			id := dynamo.GetS(it, "message_id")
			pk := dynamo.GetS(it, dynamo.AttrPK)
			switch {
			case strings.HasPrefix(pk, ShardPrefix):
				if counts[id] == nil {
					counts[id] = map[string]int{}
				}
				addCounts(counts[id], it)
			case strings.HasPrefix(pk, ReaderPrefix):
				if set, ok := it[attrEmoji].(*types.AttributeValueMemberSS); ok {
					mine[id] = map[string]bool{}
					for _, e := range set.Value {
						mine[id][e] = true
					}
				}
			}
		}
	}
	for _, m := range msgs {
		if len(m.ReactionEmoji) == 0 || !m.DeletedAt.IsZero() {
			continue
		}
		var list []chat.Reaction
		for _, e := range m.ReactionEmoji {
			if n := counts[m.ID][e]; n > 0 {
				list = append(list, chat.Reaction{Emoji: e, Count: n, Me: mine[m.ID][e]})
			}
		}
		if len(list) > 0 {
			out[m.ID] = list
		}
	}
	return out, nil
}
