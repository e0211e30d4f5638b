package dynamo

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB's limits on what one transaction writes.
const (
	MaxItemBytes        = 400 << 10
	MaxTransactionBytes = 4 << 20
	MaxTransactionItems = 100
)

// CheckTransactionSize enforces DynamoDB's item and transaction size
// limits before sending (moto does not enforce them): a breach is a bug in
// the bounds of what we store, and must fail loudly rather than in AWS only.
func CheckTransactionSize(items []types.TransactWriteItem) error {
	if len(items) > MaxTransactionItems {
		return fmt.Errorf("%d items in one transaction, over %d", len(items), MaxTransactionItems)
	}
	total := 0
	for _, it := range items {
		var n int
		switch {
		case it.Put != nil:
			n = ItemSize(it.Put.Item)
		case it.Update != nil:
			n = ItemSize(it.Update.Key) + valuesSize(it.Update.ExpressionAttributeValues)
		case it.Delete != nil:
			n = ItemSize(it.Delete.Key)
		case it.ConditionCheck != nil:
			n = ItemSize(it.ConditionCheck.Key)
		}
		if n > MaxItemBytes {
			return fmt.Errorf("an item of %d bytes, over %d", n, MaxItemBytes)
		}
		total += n
	}
	if total > MaxTransactionBytes {
		return fmt.Errorf("a transaction of %d bytes, over %d", total, MaxTransactionBytes)
	}
	return nil
}

func valuesSize(vals map[string]types.AttributeValue) int {
	n := 0
	for _, v := range vals {
		n += attrSize(v)
	}
	return n
}

// ItemSize is an item's size as DynamoDB counts it: the UTF-8 length of
// every attribute name plus the size of its value.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + attrSize(v)
	}
	return n
}

// attrSize is the size of one value, rounded up where DynamoDB's rules are
// approximate (numbers, and the overhead of maps and lists).
func attrSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)/2 + 2
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += len(s)/2 + 2
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberM:
		return 3 + len(v.Value) + ItemSize(v.Value)
	case *types.AttributeValueMemberL:
		n := 3 + len(v.Value)
		for _, e := range v.Value {
			n += attrSize(e)
		}
		return n
	}
	return 0
}
