package translationstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/messages"
)

// pendingRow is a message as PendingTranslationIndex projects it: the
// table's and the index's keys, and what a job needs besides its content.
type pendingRow struct {
	PK             string `dynamodbav:"pk"`
	SK             string `dynamodbav:"sk"`
	ID             string `dynamodbav:"id"`
	WorkspaceID    string `dynamodbav:"workspace_id"`
	ChannelID      string `dynamodbav:"channel_id"`
	SourceLanguage string `dynamodbav:"source_language"`
	Due            string `dynamodbav:"pending_due"`
	Attempts       int    `dynamodbav:"pending_attempts"`
}

// pendingQueriesInFlight bounds the sweep's concurrent Queries of the
// index's shards: 64 shards are 4 rounds of one round trip each.
const pendingQueriesInFlight = 16

// DuePending implements relay.PendingStore: the marked messages whose
// marker is due at now, oldest due first, at most limit of them. One Query
// per shard (dynamo.PendingShards, pendingQueriesInFlight at a time), more
// only for more than a page of due markers in one; shards not yet read
// when limit markers are found are left to the next run. The index is
// eventually consistent: a marker cleared a moment ago may still be
// listed, which costs a duplicate job, never a lost one. Errors:
// EUnavailable, EInternal.
func (s *Store) DuePending(ctx context.Context, now time.Time, limit int) ([]messages.Pending, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	before := dynamo.SortTime(now)
	var (
		mu    sync.Mutex
		out   []messages.Pending
		wg    sync.WaitGroup
		next  = make(chan int)
		found atomic.Int64
	)
	for range min(pendingQueriesInFlight, dynamo.PendingShards) {
		wg.Go(func() {
			for shard := range next {
				if found.Load() >= int64(limit) || ctx.Err() != nil {
					continue
				}
				got, err := s.duePending(ctx, shard, before, limit, &found)
				if err != nil {
					cancel(err)
					continue
				}
				mu.Lock()
				out = append(out, got...)
				mu.Unlock()
			}
		})
	}
	for shard := range dynamo.PendingShards {
		next <- shard
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b messages.Pending) int { return strings.Compare(a.Version, b.Version) })
	return out[:min(len(out), limit)], nil
}

// duePending reads one shard's due markers, at most limit, adding each to
// found (the run's count) and stopping once found reaches limit.
func (s *Store) duePending(ctx context.Context, shard int, before string, limit int, found *atomic.Int64) ([]messages.Pending, error) {
	in := &dynamodb.QueryInput{
		TableName:              &s.Name,
		IndexName:              aws.String(dynamo.PendingIndex),
		KeyConditionExpression: aws.String("#ps = :shard AND #pd < :before"),
		ExpressionAttributeNames: map[string]string{
			"#ps": dynamo.AttrPendingShard, "#pd": dynamo.AttrPendingDue,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":shard": dynamo.Str(fmt.Sprintf("PENDING#%02d", shard)), ":before": dynamo.Str(before),
		},
	}
	var out []messages.Pending
	for len(out) < limit {
		in.Limit = aws.Int32(int32(min(limit-len(out), 1000)))
		page, err := s.Client.Query(ctx, in)
		if err != nil {
			return nil, dynamo.Fail("due pending messages", err)
		}
		for _, item := range page.Items {
			var r pendingRow
			if err := attributevalue.UnmarshalMap(item, &r); err != nil {
				return nil, chat.Internal(fmt.Errorf("dynamo: due pending messages: %w", err))
			}
			channel := strings.TrimPrefix(r.PK, "CHAN#")
			id := strings.TrimPrefix(r.SK, dynamo.MessagePrefix)
			if !chat.ValidID(channel) || !chat.ValidID(id) {
				continue
			}
			out = append(out, messages.Pending{
				Job: messages.Job{MessageID: id, WorkspaceID: r.WorkspaceID, ChannelID: channel,
					SourceLanguage: r.SourceLanguage},
				Attempts: r.Attempts, Version: r.Due,
			})
		}
		if found.Add(int64(len(page.Items))) >= int64(limit) || len(page.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	return out, nil
}

// Requeued implements relay.PendingStore with one UpdateItem: the marker
// counts one more attempt and is due again at next, unless it changed
// since p was read (cleared by the translation function, or moved by
// another sweep), which is not an error. Errors: EUnavailable, EInternal.
func (s *Store) Requeued(ctx context.Context, p messages.Pending, next time.Time) error {
	return s.updateMarker(ctx, p, "requeue pending message",
		"SET #pd = :next ADD #pa :one", map[string]string{"#pa": dynamo.AttrPendingAttempts}, map[string]types.AttributeValue{
			":next": dynamo.Str(dynamo.PendingDue(next, p.Job.MessageID)), ":one": dynamo.Num(1),
		})
}

// GiveUp implements relay.PendingStore with one UpdateItem: it moves the
// marker to the index's STUCK partition, which the sweep does not read,
// unless it changed since p was read. The translation function still
// clears it if the message is translated later (a dead-letter redrive).
// Errors: EUnavailable, EInternal.
func (s *Store) GiveUp(ctx context.Context, p messages.Pending) error {
	return s.updateMarker(ctx, p, "give up pending message",
		"SET #ps = :stuck", map[string]string{"#ps": dynamo.AttrPendingShard}, map[string]types.AttributeValue{":stuck": dynamo.Str(dynamo.StuckShard)})
}

// updateMarker applies update to p's message on condition that its marker
// is still p.Version. DynamoDB refuses unused names and values, so each
// caller passes only the ones its update uses (#pd is the condition's).
func (s *Store) updateMarker(ctx context.Context, p messages.Pending, op, update string, names map[string]string, values map[string]types.AttributeValue) error {
	values[":version"] = dynamo.Str(p.Version)
	names["#pd"] = dynamo.AttrPendingDue
	_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.Name,
		Key:                       dynamo.Key(dynamo.ChanPK(p.Job.ChannelID), dynamo.MessageSK(p.Job.MessageID)),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String("#pd = :version"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil
	}
	return dynamo.Fail(op+" "+p.Job.MessageID, err)
}
