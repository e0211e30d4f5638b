package deliverystore

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/dynamo"
)

var _ delivery.Limiter = (*Store)(nil)

// ratePrefix keys a webhook's delivery counters: pk
// RATE#<ws>#<webhook>#<unix second>#<shard>, sk #META, kept two minutes
// (TTL). The second and the shard in the partition key spread one
// webhook's counting over many keys: no key takes more than a second of
// writes, and within a second each shard takes its share.
const ratePrefix = "RATE#"

// ratePerShard is the most deliveries a second one shard of a webhook's
// counter grants: a webhook at the largest rate_limit (1,000) counts on 4
// shards, each granting 250 a second, which leaves each key room for three
// times as many waiting deliveries counted again.
const ratePerShard = 250

// rateShards is the number of shards of a counter for limit a second.
func rateShards(limit int) int { return dynamo.CounterShards(int64(limit), ratePerShard) }

// ratePK is the partition key of shard shard of w's counter of second sec.
func ratePK(w delivery.Webhook, sec int64, shard int) string {
	return ratePrefix + w.WorkspaceID + "#" + w.ID + "#" + strconv.FormatInt(sec, 10) + "#" + strconv.Itoa(shard)
}

// Take implements delivery.Limiter with one UpdateItem (ADD, which
// concurrent instances never conflict on) of a random shard of the
// webhook's counter for the second of at. Shard i grants its share a_i of
// w.RateLimit (the shares add up to the limit), so the second never grants
// more than the limit: it owns places o_i+1 .. o_i+a_i of each second's
// limit (o_i the shares before it), and the n-th delivery counted on it
// has place k*limit + o_i + r + 1, where k, r = (n-1) / a_i, (n-1) % a_i:
// within the limit for the first a_i, otherwise k seconds on, as it is k
// seconds on in its shard's line. No two deliveries of a second share a
// place. With one shard (limits up to 250) the place is the count.
// Errors: EUnavailable.
func (s *Store) Take(ctx context.Context, w delivery.Webhook, at time.Time) (int, error) {
	sec := at.Unix()
	shards := rateShards(w.RateLimit)
	shard := rand.IntN(shards)
	out, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name,
		Key:                       dynamo.Key(ratePK(w, sec, shard), dynamo.MetaSK),
		UpdateExpression:          aws.String("ADD #n :one SET #ttl = if_not_exists(#ttl, :ttl)"),
		ExpressionAttributeNames:  map[string]string{"#n": "n", "#ttl": "ttl"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": dynamo.Num(1), ":ttl": dynamo.Num(sec + 120)},
		ReturnValues:              types.ReturnValueUpdatedNew})
	if err != nil {
		return 0, dynamo.Fail("count a delivery to "+w.ID, err)
	}
	n := int(dynamo.GetN(out.Attributes, "n"))
	if w.RateLimit <= 0 {
		return n, nil
	}
	c := dynamo.ShardedCounter{Limit: int64(w.RateLimit), Shards: shards}
	offset := 0
	for i := range shard {
		offset += int(c.Allowance(i))
	}
	share := int(c.Allowance(shard))
	return (n-1)/share*w.RateLimit + offset + (n-1)%share + 1, nil
}
