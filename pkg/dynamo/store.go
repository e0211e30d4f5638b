package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/chatbridge/chat/pkg/chat"
)

// Attribute names of the table's keys and TTL.
const (
	attrPK  = "pk"
	attrSK  = "sk"
	attrTTL = "ttl"
)

// metaSK is the sort key of an entity's own item in its partition.
const metaSK = "#META"

// Store implements the storage interfaces of the service on one table.
type Store struct {
	db    *dynamodb.Client
	table string
}

// New returns a Store on table, using db.
func New(db *dynamodb.Client, table string) *Store {
	return &Store{db: db, table: table}
}

// Table returns the table name.
func (s *Store) Table() string { return s.table }

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: str(pk), attrSK: str(sk)}
}

func str(s string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: s} }

func num(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// Key builders. Every identifier in them has been checked with chat.ValidID
// (or hashed) first, so no client input can forge a '#'-separated key.
func wsPK(ws string) string          { return "WS#" + ws }
func userSK(id string) string        { return "USER#" + id }
func chanSK(id string) string        { return "CHAN#" + id }
func chanPK(id string) string        { return "CHAN#" + id }
func roomPK(id string) string        { return "ROOM#" + id }
func roomSK(id string) string        { return "ROOM#" + id }
func clientSK(key string) string     { return "CLIENT#" + key }
func guestSK(id string) string       { return "GUEST#" + id }
func readerUserSK(id string) string  { return "READER#USER#" + id }
func readerGuestSK(id string) string { return "READER#GUEST#" + id }
func apiTokenPK(hash string) string  { return "APITOKEN#" + hash }
func sessionPK(hash string) string   { return "GSESSION#" + hash }
func inboundPK(id string) string     { return "IWH#" + id }
func outboundSK(created time.Time, id string) string {
	return "OWH#" + sortTime(created) + "#" + id
}
func supportSK(created time.Time, id string) string {
	return "SWH#" + sortTime(created) + "#" + id
}

// sortTime renders t so that string order is time order.
func sortTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

// epoch is a TTL value: DynamoDB deletes the item some time after it. Code
// never relies on that deletion; every expiry is also checked on read.
func epoch(t time.Time) int64 { return t.Unix() }

// retryable API error codes: the SDK has already retried them; surfacing
// them as 503 lets the client retry later.
var unavailableCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"RequestLimitExceeded":                   true,
	"ThrottlingException":                    true,
	"InternalServerError":                    true,
	"ServiceUnavailable":                     true,
	"TransactionInProgressException":         true,
	"TransactionConflictException":           true,
}

// fail translates an SDK error: op names the operation for the log.
func fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var ce *chat.Error
	if errors.As(err, &ce) {
		return err
	}
	wrapped := fmt.Errorf("dynamo: %s: %w", op, err)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return chat.Unavailable(wrapped)
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		if unavailableCodes[api.ErrorCode()] {
			return chat.Unavailable(wrapped)
		}
		return chat.Internal(wrapped)
	}
	// No API error: the request never got an answer (connection refused,
	// reset, DNS). The SDK retried; report the dependency as unavailable.
	return chat.Unavailable(wrapped)
}

// cancellation returns the reasons of a cancelled transaction, or nil when
// err is not one.
func cancellation(err error) []types.CancellationReason {
	var tc *types.TransactionCanceledException
	if errors.As(err, &tc) {
		return tc.CancellationReasons
	}
	return nil
}

// conditionFailed reports whether reason i of a cancelled transaction is a
// failed condition.
func conditionFailed(reasons []types.CancellationReason, i int) bool {
	return i < len(reasons) && aws.ToString(reasons[i].Code) == "ConditionalCheckFailed"
}

// conflicted reports whether a cancelled transaction collided with another
// transaction on one of its items: worth retrying.
func conflicted(reasons []types.CancellationReason) bool {
	for _, r := range reasons {
		if aws.ToString(r.Code) == "TransactionConflict" {
			return true
		}
	}
	return false
}

// batchGet reads keys with strong consistency, retrying unprocessed keys.
func (s *Store) batchGet(ctx context.Context, op string, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	req := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	for attempt := 0; len(req) > 0; attempt++ {
		if attempt > 0 {
			if attempt > 5 {
				return nil, chat.Unavailable(fmt.Errorf("dynamo: %s: unprocessed keys after %d attempts", op, attempt))
			}
			select {
			case <-ctx.Done():
				return nil, fail(op, ctx.Err())
			case <-time.After(time.Duration(25<<attempt) * time.Millisecond):
			}
		}
		res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return nil, fail(op, err)
		}
		out = append(out, res.Responses[s.table]...)
		req = res.UnprocessedKeys
	}
	return out, nil
}

func getS(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// listQuery is the key range of one list: the items of partition pk whose
// sort key starts with prefix, in sort-key order when forward, else
// reversed. A position in the list is an item's sort key.
type listQuery struct {
	op      string // names the list in errors
	pk      string
	prefix  string
	forward bool
}

// listPage is the one paging mechanism of every list: queryPage's items,
// each unmarshalled into I and converted by convert, with the position after
// each (its sort key). Errors: those of queryPage; EInternal for an item
// that does not unmarshal.
func listPage[I, T any](ctx context.Context, s *Store, q listQuery, after string, limit int, convert func(I) T) (chat.Page[T], error) {
	items, next, err := s.queryPage(ctx, q, after, limit)
	if err != nil {
		return chat.Page[T]{}, err
	}
	page := chat.Page[T]{Items: make([]T, 0, len(items)), After: make([]string, 0, len(items)), Next: next}
	for _, av := range items {
		var it I
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return chat.Page[T]{}, chat.Internal(fmt.Errorf("dynamo: %s: %w", q.op, err))
		}
		page.Items = append(page.Items, convert(it))
		page.After = append(page.After, getS(av, attrSK))
	}
	return page, nil
}

// queryPage reads up to limit items of q after the position after, with
// one Query. It asks for one item more than limit, to learn without a
// second call whether another page exists. next is the last returned
// item's sort key when more may follow: when that extra item came, and also
// when DynamoDB ended its own page early (LastEvaluatedKey after 1 MB read),
// so such a page has fewer than limit items and still a next position. A
// Query that returns no item but a LastEvaluatedKey (possible only with a
// filter, which no list uses) is followed, so that a page that is not the
// last is never empty. Errors: EValidation on "cursor" for a position
// outside q's prefix; EUnavailable when DynamoDB failed after retries.
func (s *Store) queryPage(ctx context.Context, q listQuery, after string, limit int) ([]map[string]types.AttributeValue, string, error) {
	if limit < 1 {
		return nil, "", chat.Internal(fmt.Errorf("dynamo: %s: limit %d", q.op, limit))
	}
	in := &dynamodb.QueryInput{
		TableName:              &s.table,
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(q.pk), ":prefix": str(q.prefix),
		},
		Limit:            aws.Int32(int32(limit + 1)),
		ScanIndexForward: aws.Bool(q.forward),
	}
	if after != "" {
		if !strings.HasPrefix(after, q.prefix) {
			return nil, "", chat.FieldError("cursor", "The cursor is invalid.")
		}
		in.ExclusiveStartKey = key(q.pk, after)
	}
	var out *dynamodb.QueryOutput
	for {
		var err error
		if out, err = s.db.Query(ctx, in); err != nil {
			return nil, "", fail(q.op, err)
		}
		if len(out.Items) > 0 || len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	items := out.Items
	switch {
	case len(items) > limit:
		items = items[:limit]
	case len(out.LastEvaluatedKey) == 0:
		return items, "", nil
	}
	return items, getS(items[len(items)-1], attrSK), nil
}

// kindRoom marks a channelRoomItem among a channel's readers.
const kindRoom = "room"

// queryAll runs a strongly consistent query on the table and returns every
// page of it.
func (s *Store) queryAll(ctx context.Context, op string, in *dynamodb.QueryInput) ([]map[string]types.AttributeValue, error) {
	in.TableName = &s.table
	in.ConsistentRead = aws.Bool(true)
	var out []map[string]types.AttributeValue
	for {
		res, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fail(op, err)
		}
		out = append(out, res.Items...)
		if len(res.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}

// batchWrite runs reqs in batches of 25, retrying unprocessed items with
// backoff.
func (s *Store) batchWrite(ctx context.Context, op string, reqs []types.WriteRequest) error {
	for start := 0; start < len(reqs); start += maxBatchWrite {
		pending := reqs[start:min(start+maxBatchWrite, len(reqs))]
		for attempt := 0; len(pending) > 0; attempt++ {
			if attempt > 0 {
				if attempt > 8 {
					return chat.Unavailable(fmt.Errorf("dynamo: %s: unprocessed items after %d attempts", op, attempt))
				}
				select {
				case <-ctx.Done():
					return fail(op, ctx.Err())
				case <-time.After(time.Duration(25<<attempt) * time.Millisecond):
				}
			}
			res, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
				RequestItems: map[string][]types.WriteRequest{s.table: pending},
			})
			if err != nil {
				return fail(op, err)
			}
			pending = res.UnprocessedItems[s.table]
		}
	}
	return nil
}
