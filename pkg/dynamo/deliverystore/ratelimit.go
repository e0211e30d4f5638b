package deliverystore

import (
	"context"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/dynamo"
)

var _ delivery.Limiter = (*Store)(nil)

// ratePrefix keys a webhook's per-second delivery counters: pk
// RATE#<ws>#<webhook>, sk the unix second, kept two minutes (TTL).
const ratePrefix = "RATE#"

// Take implements delivery.Limiter with one UpdateItem (ADD, which
// concurrent instances never conflict on) of the webhook's counter for
// the second of at. Errors: EUnavailable.
func (s *Store) Take(ctx context.Context, w delivery.Webhook, at time.Time) (int, error) {
	sec := at.Unix()
	out, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name,
		Key:                       dynamo.Key(ratePrefix+w.WorkspaceID+"#"+w.ID, strconv.FormatInt(sec, 10)),
		UpdateExpression:          aws.String("ADD #n :one SET #ttl = if_not_exists(#ttl, :ttl)"),
		ExpressionAttributeNames:  map[string]string{"#n": "n", "#ttl": "ttl"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": dynamo.Num(1), ":ttl": dynamo.Num(sec + 120)},
		ReturnValues:              types.ReturnValueUpdatedNew})
	if err != nil {
		return 0, dynamo.Fail("count a delivery to "+w.ID, err)
	}
	return int(dynamo.GetN(out.Attributes, "n")), nil
}
