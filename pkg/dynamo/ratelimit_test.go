package dynamo_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/delivery"
)

// takeAll makes n concurrent Takes for w at one instant and returns the
// places in line, sorted.
func takeAll(t *testing.T, l delivery.Limiter, w delivery.Webhook, at time.Time, n int) []int {
	t.Helper()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		places []int
	)
	for range n {
		wg.Go(func() {
			p, err := l.Take(context.Background(), w, at)
			if err != nil {
				t.Errorf("take: %v", err)
				return
			}
			mu.Lock()
			places = append(places, p)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(places)
	return places
}

// rateKeys returns the distinct partition keys of w's rate counters.
func rateKeys(t *testing.T, db *dynamodb.Client, table string, w delivery.Webhook) []string {
	t.Helper()
	out, err := db.Scan(context.Background(), &dynamodb.ScanInput{TableName: &table, ConsistentRead: aws.Bool(true),
		FilterExpression:          aws.String("begins_with(pk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "RATE#" + w.WorkspaceID + "#" + w.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, it := range out.Items {
		if pk := it["pk"].(*types.AttributeValueMemberS).Value; !slices.Contains(keys, pk) {
			keys = append(keys, pk)
		}
	}
	return keys
}

// TestRateCounterSpreadsOverKeys: a webhook at rate_limit 1,000 counts its
// deliveries on several keys (one partition key takes about 1,000 writes a
// second, and a second's waiting deliveries are counted again beside it):
// 40 concurrent deliveries of one second write at least 3 keys, and are
// all granted, each its own place.
func TestRateCounterSpreadsOverKeys(t *testing.T) {
	st, s := newApplyStore(t)
	w := delivery.Webhook{ID: "01JDZ8Y7K3Q4W5E6R7T8Y9A0RL", WorkspaceID: testWS, RateLimit: 1000}
	places := takeAll(t, s.Deliveries, w, time.Now(), 40)
	if len(places) != 40 || places[len(places)-1] > w.RateLimit {
		t.Fatalf("places %v, want 40 within the limit", places)
	}
	if c := slices.Compact(slices.Clone(places)); len(c) != len(places) {
		t.Errorf("places %v: two deliveries share a place", places)
	}
	if keys := rateKeys(t, st.DB, st.Table, w); len(keys) < 3 {
		t.Errorf("40 concurrent deliveries counted on %d keys %v, want at least 3", len(keys), keys)
	}
}

// TestRateCounterGrantsTheLimitExactly: 400 concurrent deliveries in one
// second to a webhook at rate_limit 300 (two shares of 150): exactly 300
// places within the limit, no place twice, and every other one waits one
// second (places 301-600), as the single counter ordered them.
func TestRateCounterGrantsTheLimitExactly(t *testing.T) {
	_, s := newApplyStore(t)
	w := delivery.Webhook{ID: "01JDZ8Y7K3Q4W5E6R7T8Y9A0RM", WorkspaceID: testWS, RateLimit: 300}
	places := takeAll(t, s.Deliveries, w, time.Now(), 400)
	granted := 0
	for i, p := range places {
		if p <= w.RateLimit {
			granted++
		} else if (p-1)/w.RateLimit != 1 {
			t.Errorf("place %d waits %d seconds, want 1", p, (p-1)/w.RateLimit)
		}
		if i > 0 && places[i-1] == p {
			t.Errorf("place %d given twice", p)
		}
	}
	if granted != w.RateLimit {
		t.Errorf("%d of 400 granted in the second, want exactly %d", granted, w.RateLimit)
	}
}
