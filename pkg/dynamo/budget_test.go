package dynamo_test

import (
	"context"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/chat"
)

func TestTranslationBudgetIsTheFixtures(t *testing.T) {
	st, s := newApplyStore(t)
	ctx := context.Background()
	d := demo(t)
	budget := int64(1234)
	d.Workspaces[0].TranslationCharsPerDay = &budget
	apply(t, s, d, time.Now())

	st.Calls.Reset()
	got, err := s.Translation.TranslationBudget(ctx, demoWorkspace)
	if err != nil || got != budget {
		t.Fatalf("TranslationBudget: got %d, %v; want %d", got, err, budget)
	}
	if calls := st.Calls.Calls(); !reflect.DeepEqual(calls, []string{"DynamoDB.GetItem"}) {
		t.Fatalf("TranslationBudget made %v, want one DynamoDB.GetItem", calls)
	}
	// A workspace stored before the budget existed, and one not stored.
	seed(t, st, map[string]any{"pk": "WS#01JDZ8Y7K3Q4W5E6R7T8Y9A0OL", "sk": "#META", "name": "Old"})
	for _, ws := range []string{"01JDZ8Y7K3Q4W5E6R7T8Y9A0OL", "01JDZ8Y7K3Q4W5E6R7T8Y9A0NO"} {
		if got, err := s.Translation.TranslationBudget(ctx, ws); err != nil || got != chat.DefaultTranslationCharsPerDay {
			t.Fatalf("TranslationBudget(%s): got %d, %v; want the default %d", ws, got, err, chat.DefaultTranslationCharsPerDay)
		}
	}
}

// TestSpendTranslationChars spends to the budget's edge, one character past
// it, and across 00:00 UTC, with one UpdateItem a spend, and none for a
// spend that the counts this instance saw say cannot fit.
func TestSpendTranslationChars(t *testing.T) {
	st, s := newApplyStore(t)
	ctx := context.Background()
	const ws, limit = "01JDZ8Y7K3Q4W5E6R7T8Y9A0WW", 100
	last := time.Date(2026, 11, 22, 23, 59, 59, 999_999_999, time.UTC)
	for i, step := range []struct {
		at        time.Time
		chars     int64
		want      bool
		wantCalls int
	}{
		{last.Add(-time.Hour), 60, true, 1},
		{last, 41, false, 0},                      // 101: one over, known from the first spend's count
		{last, 40, true, 1},                       // 100: exactly at the budget
		{last, 1, false, 0},                       // spent, known from the last spend's count
		{last.Add(time.Nanosecond), 100, true, 1}, // 00:00 UTC: a new day
		{last.Add(time.Nanosecond), 1, false, 0},
		{last.Add(time.Hour), limit + 1, false, 0}, // more than a whole day's: no call
	} {
		st.Calls.Reset()
		got, err := s.Translation.SpendTranslationChars(ctx, ws, step.at, step.chars, limit)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got != step.want {
			t.Fatalf("step %d: spend %d at %s: got %v, want %v", i, step.chars, step.at.Format(time.RFC3339Nano), got, step.want)
		}
		if n := st.Calls.Total(); n != step.wantCalls {
			t.Fatalf("step %d: %d calls (%v), want %d", i, n, st.Calls.Calls(), step.wantCalls)
		}
	}
	for day, want := range map[string]string{"2026-11-22": "100", "2026-11-23": "100"} {
		item := budgetCounter(t, st, ws, day)
		if n, _ := item["chars"].(*types.AttributeValueMemberN); n == nil || n.Value != want {
			t.Fatalf("counter of %s: got %v, want chars %s", day, item["chars"], want)
		}
		dayStart, _ := time.Parse(time.DateOnly, day)
		wantTTL := dayStart.Add(48 * time.Hour).Unix()
		if n, _ := item["ttl"].(*types.AttributeValueMemberN); n == nil || n.Value != strconv.FormatInt(wantTTL, 10) {
			t.Fatalf("counter of %s: ttl %v, want %d (a day after the day ends)", day, item["ttl"], wantTTL)
		}
	}
}

// budgetCounter reads workspace ws's counter of translated characters of
// day (2006-01-02), consistently; nil when there is none.
func budgetCounter(t *testing.T, st *stacktest.Stack, ws, day string) map[string]types.AttributeValue {
	t.Helper()
	out, err := st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &st.Table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "TRBUDGET#" + ws + "#" + day},
			"sk": &types.AttributeValueMemberS{Value: "#META"}}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// TestBudgetSpreadsOverShards: a workspace whose budget lets it translate
// more than 1,000 messages a second (4,000,000 characters a day) counts its
// spends on many items, not one (one partition key takes about 1,000
// writes a second): 48 concurrent spends write at least 8 distinct counter
// keys of the day, which count exactly what was spent.
func TestBudgetSpreadsOverShards(t *testing.T) {
	st, s := newApplyStore(t)
	const ws, limit, spends, chars = "01JDZ8Y7K3Q4W5E6R7T8Y9A0WW", 4_000_000, 48, 120
	day := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for range spends {
		wg.Go(func() {
			if ok, err := s.Translation.SpendTranslationChars(context.Background(), ws, day, chars, limit); err != nil || !ok {
				t.Errorf("spend: %v, %v", ok, err)
			}
		})
	}
	wg.Wait()
	out, err := st.DB.Scan(context.Background(), &dynamodb.ScanInput{TableName: &st.Table, ConsistentRead: aws.Bool(true),
		FilterExpression:          aws.String("begins_with(pk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "TRBUDGET#" + ws + "#2026-11-22"}}})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, it := range out.Items {
		n, _ := strconv.ParseInt(it["chars"].(*types.AttributeValueMemberN).Value, 10, 64)
		total += n
	}
	if len(out.Items) < 8 {
		t.Errorf("%d concurrent spends wrote %d counter keys, want at least 8", spends, len(out.Items))
	}
	if total != spends*chars {
		t.Errorf("the counter keys count %d characters, want exactly %d", total, spends*chars)
	}
	t.Logf("%d spends counted on %d keys", spends, len(out.Items))
}
