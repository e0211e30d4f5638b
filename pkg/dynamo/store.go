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
	"github.com/aws/smithy-go"
	"github.com/chatbridge/chat/pkg/chat"
)

// Attribute names of the table's keys and TTL.
const (
	AttrPK  = "pk"
	AttrSK  = "sk"
	AttrTTL = "ttl"
)

// MetaSK is the sort key of an entity's own item in its partition.
const MetaSK = "#META"

// Table implements the storage interfaces of the service on one table.
type Table struct {
	Client *dynamodb.Client
	Name   string
}

// New returns a Store on table, using db.
func New(db *dynamodb.Client, table string) *Table {
	return &Table{Client: db, Name: table}
}

func Key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{AttrPK: Str(pk), AttrSK: Str(sk)}
}

func Str(s string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: s} }

func Num(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// Key builders. Every identifier in them has been checked with chat.ValidID
// (or hashed) first, so no client input can forge a '#'-separated key.
func WsPK(ws string) string          { return "WS#" + ws }
func UserSK(id string) string        { return "USER#" + id }
func ChanSK(id string) string        { return "CHAN#" + id }
func ChanPK(id string) string        { return "CHAN#" + id }
func RoomPK(id string) string        { return "ROOM#" + id }
func RoomSK(id string) string        { return "ROOM#" + id }
func ClientSK(key string) string     { return "CLIENT#" + key }
func GuestSK(id string) string       { return "GUEST#" + id }
func ReaderUserSK(id string) string  { return "READER#USER#" + id }
func ReaderGuestSK(id string) string { return "READER#GUEST#" + id }
func APITokenPK(hash string) string  { return "APITOKEN#" + hash }
func SessionPK(hash string) string   { return "GSESSION#" + hash }
func InboundPK(id string) string     { return "IWH#" + id }
func OutboundSK(created time.Time, id string) string {
	return "OWH#" + SortTime(created) + "#" + id
}
func SupportSK(created time.Time, id string) string {
	return "SWH#" + SortTime(created) + "#" + id
}

// SortTime renders t so that string order is time order.
func SortTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

// Epoch is a TTL value: DynamoDB deletes the item some time after it. Code
// never relies on that deletion; every expiry is also checked on read.
func Epoch(t time.Time) int64 { return t.Unix() }

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

// Fail translates an SDK error: op names the operation for the log.
func Fail(op string, err error) error {
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

// Cancellation returns the reasons of a cancelled transaction, or nil when
// err is not one.
func Cancellation(err error) []types.CancellationReason {
	var tc *types.TransactionCanceledException
	if errors.As(err, &tc) {
		return tc.CancellationReasons
	}
	return nil
}

// ConditionFailed reports whether reason i of a cancelled transaction is a
// failed condition.
func ConditionFailed(reasons []types.CancellationReason, i int) bool {
	return i < len(reasons) && aws.ToString(reasons[i].Code) == "ConditionalCheckFailed"
}

// Conflicted reports whether a cancelled transaction collided with another
// transaction on one of its items: worth retrying.
func Conflicted(reasons []types.CancellationReason) bool {
	for _, r := range reasons {
		if aws.ToString(r.Code) == "TransactionConflict" {
			return true
		}
	}
	return false
}

// Throttled reports whether a cancelled transaction was refused for an
// item's partition throughput (reason ThrottlingError, or
// ProvisionedThroughputExceeded): worth retrying after a pause. The SDK
// retries a throttled call, but not a transaction cancelled for it.
func Throttled(reasons []types.CancellationReason) bool {
	for _, r := range reasons {
		switch aws.ToString(r.Code) {
		case "ThrottlingError", "ProvisionedThroughputExceeded":
			return true
		}
	}
	return false
}

// BatchGet reads keys with strong consistency, retrying unprocessed keys.
func (s *Table) BatchGet(ctx context.Context, op string, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	return s.BatchGetProjected(ctx, op, keys, "", nil)
}

// BatchGetProjected is BatchGet projecting proj (with the attribute names
// names) when it is not "".
func (s *Table) BatchGetProjected(ctx context.Context, op string, keys []map[string]types.AttributeValue, proj string, names map[string]string) ([]map[string]types.AttributeValue, error) {
	ka := types.KeysAndAttributes{Keys: keys, ConsistentRead: aws.Bool(true)}
	if proj != "" {
		ka.ProjectionExpression, ka.ExpressionAttributeNames = aws.String(proj), names
	}
	var out []map[string]types.AttributeValue
	req := map[string]types.KeysAndAttributes{s.Name: ka}
	for attempt := 0; len(req) > 0; attempt++ {
		if attempt > 0 {
			if attempt > 5 {
				return nil, chat.Unavailable(fmt.Errorf("dynamo: %s: unprocessed keys after %d attempts", op, attempt))
			}
			select {
			case <-ctx.Done():
				return nil, Fail(op, ctx.Err())
			case <-time.After(time.Duration(25<<attempt) * time.Millisecond):
			}
		}
		res, err := s.Client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return nil, Fail(op, err)
		}
		out = append(out, res.Responses[s.Name]...)
		req = res.UnprocessedKeys
	}
	return out, nil
}

func GetS(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// ListQuery is the key range of one list: the items of partition pk whose
// sort key starts with prefix, in sort-key order when forward, else
// reversed. A position in the list is an item's sort key.
type ListQuery struct {
	Op      string // names the list in errors
	PK      string
	Prefix  string
	Forward bool
	// Filter, when set, is a FilterExpression on the items read (names
	// only, no values): a page is then read with as many Queries as it
	// takes to fill it or end the partition.
	Filter string
	// Index, when set, is the global secondary index queried, whose
	// partition key attribute is IndexPK (its sort key is sk) and whose
	// items are all in the table partition TablePK, for the start key.
	Index, IndexPK, TablePK string
}

// ListPage is the one paging mechanism of every list: queryPage's items,
// each unmarshalled into I and converted by convert, with the position after
// each (its sort key). Errors: those of queryPage; EInternal for an item
// that does not unmarshal.
func ListPage[I, T any](ctx context.Context, s *Table, q ListQuery, after string, limit int, convert func(I) T) (chat.Page[T], error) {
	items, next, err := s.QueryPage(ctx, q, after, limit)
	if err != nil {
		return chat.Page[T]{}, err
	}
	page := chat.Page[T]{Items: make([]T, 0, len(items)), After: make([]string, 0, len(items)), Next: next}
	for _, av := range items {
		var it I
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return chat.Page[T]{}, chat.Internal(fmt.Errorf("dynamo: %s: %w", q.Op, err))
		}
		page.Items = append(page.Items, convert(it))
		page.After = append(page.After, GetS(av, AttrSK))
	}
	return page, nil
}

// QueryPage reads up to limit items of q after the position after, with
// one Query. It asks for one item more than limit, to learn without a
// second call whether another page exists. next is the last returned
// item's sort key when more may follow: when that extra item came, and also
// when DynamoDB ended its own page early (LastEvaluatedKey after 1 MB read),
// so such a page has fewer than limit items and still a next position. A
// Query that returns no item but a LastEvaluatedKey is followed, so that a
// page that is not the last is never empty; with a filter (q.Filter),
// Queries follow each other until the page is full or the partition ends. Errors: EValidation on "cursor" for a position
// outside q's prefix; EUnavailable when DynamoDB failed after retries.
func (s *Table) QueryPage(ctx context.Context, q ListQuery, after string, limit int) ([]map[string]types.AttributeValue, string, error) {
	if limit < 1 {
		return nil, "", chat.Internal(fmt.Errorf("dynamo: %s: limit %d", q.Op, limit))
	}
	in := &dynamodb.QueryInput{
		TableName:              &s.Name,
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": Str(q.PK), ":prefix": Str(q.Prefix),
		},
		Limit:            aws.Int32(int32(limit + 1)),
		ScanIndexForward: aws.Bool(q.Forward),
	}
	if q.Index != "" {
		in.IndexName = aws.String(q.Index)
		in.KeyConditionExpression = aws.String("#ipk = :pk AND begins_with(sk, :prefix)")
		in.ExpressionAttributeNames = map[string]string{"#ipk": q.IndexPK}
	}
	if q.Filter != "" {
		in.FilterExpression = aws.String(q.Filter)
	}
	if after != "" {
		if !strings.HasPrefix(after, q.Prefix) {
			return nil, "", chat.FieldError("cursor", "The cursor is invalid.")
		}
		in.ExclusiveStartKey = Key(q.PK, after)
		if q.Index != "" {
			in.ExclusiveStartKey = Key(q.TablePK, after)
			in.ExclusiveStartKey[q.IndexPK] = Str(q.PK)
		}
	}
	var items []map[string]types.AttributeValue
	var out *dynamodb.QueryOutput
	for {
		var err error
		if out, err = s.Client.Query(ctx, in); err != nil {
			return nil, "", Fail(q.Op, err)
		}
		items = append(items, out.Items...)
		// A Query's items make the page, fewer than asked when DynamoDB
		// ended its page early (1 MB read); a filter that left out some of
		// the items it read is read on until the page is full.
		filtered := q.Filter != "" && out.ScannedCount >= aws.ToInt32(in.Limit)
		full := len(items) > limit || len(items) > 0 && !filtered
		if full || len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	switch {
	case len(items) > limit:
		items = items[:limit]
	case len(out.LastEvaluatedKey) == 0:
		return items, "", nil
	}
	return items, GetS(items[len(items)-1], AttrSK), nil
}

// KindRoom marks a channelRoomItem among a channel's readers.
const KindRoom = "room"

// QueryAll runs a strongly consistent query on the table and returns every
// page of it.
func (s *Table) QueryAll(ctx context.Context, op string, in *dynamodb.QueryInput) ([]map[string]types.AttributeValue, error) {
	in.TableName = &s.Name
	in.ConsistentRead = aws.Bool(true)
	var out []map[string]types.AttributeValue
	for {
		res, err := s.Client.Query(ctx, in)
		if err != nil {
			return nil, Fail(op, err)
		}
		out = append(out, res.Items...)
		if len(res.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}

// BatchWrite runs reqs in batches of 25, retrying unprocessed items with
// backoff.
func (s *Table) BatchWrite(ctx context.Context, op string, reqs []types.WriteRequest) error {
	for start := 0; start < len(reqs); start += MaxBatchWrite {
		pending := reqs[start:min(start+MaxBatchWrite, len(reqs))]
		for attempt := 0; len(pending) > 0; attempt++ {
			if attempt > 0 {
				if attempt > 8 {
					return chat.Unavailable(fmt.Errorf("dynamo: %s: unprocessed items after %d attempts", op, attempt))
				}
				select {
				case <-ctx.Done():
					return Fail(op, ctx.Err())
				case <-time.After(time.Duration(25<<attempt) * time.Millisecond):
				}
			}
			res, err := s.Client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
				RequestItems: map[string][]types.WriteRequest{s.Name: pending},
			})
			if err != nil {
				return Fail(op, err)
			}
			pending = res.UnprocessedItems[s.Name]
		}
	}
	return nil
}

// Batch sizes fixed by DynamoDB.
const (
	MaxBatchWrite = 25
	MaxBatchGet   = 100
)

// Transact runs a transaction, retrying when it collided with a concurrent
// one on the same items (which DynamoDB cancels rather than serialises)
// or was refused for an item's partition throughput. A transaction
// cancelled for another reason returns its reasons. Errors: EConflict when
// it kept colliding; EUnavailable when it kept being throttled (a 503 with
// Retry-After, never a 500).
func (s *Table) Transact(ctx context.Context, op string, items []types.TransactWriteItem) ([]types.CancellationReason, error) {
	if err := CheckTransactionSize(items); err != nil {
		return nil, chat.Internal(fmt.Errorf("dynamo: %s: %w", op, err))
	}
	for attempt := 0; ; attempt++ {
		_, err := s.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil {
			return nil, nil
		}
		reasons := Cancellation(err)
		if reasons == nil {
			return nil, Fail(op, err)
		}
		throttled := Throttled(reasons)
		if !throttled && !Conflicted(reasons) {
			return reasons, nil
		}
		if attempt >= 4 {
			if throttled {
				return nil, chat.Unavailable(fmt.Errorf("dynamo: %s: transaction throttled (%s)", op, ReasonCodes(reasons)))
			}
			return nil, chat.Errorf(chat.EConflict, "%s: transaction kept colliding", op)
		}
		backoff := time.Duration(10<<attempt)*time.Millisecond + time.Duration(rand.IntN(20))*time.Millisecond
		if throttled {
			// A partition's capacity comes back within the second.
			backoff = time.Duration(50<<attempt)*time.Millisecond + time.Duration(rand.IntN(50))*time.Millisecond
		}
		select {
		case <-ctx.Done():
			return nil, Fail(op, ctx.Err())
		case <-time.After(backoff):
		}
	}
}

// ReasonCodes lists the codes of a cancelled transaction, for logs.
func ReasonCodes(reasons []types.CancellationReason) string {
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		codes[i] = aws.ToString(r.Code)
	}
	return strings.Join(codes, ",")
}

func Itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return Itoa(i/10) + digits[i%10:i%10+1]
}
