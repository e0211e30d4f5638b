package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
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
