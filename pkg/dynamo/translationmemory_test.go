package dynamo_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/chatbridge/chat/pkg/translation"
)

// TestSpendTranslationCharsOnce: a revision is charged once, whatever the
// retries, concurrent ones too; a spend past the budget charges nothing
// and records nothing, so that a later attempt within the budget is
// charged; a revision charged before goes on even when the day's budget
// is now spent. Calls: UpdateItem and PutItem for a first charge; none on
// the counter once this instance has seen the day spent.
func TestSpendTranslationCharsOnce(t *testing.T) {
	st, s := newApplyStore(t)
	ctx := context.Background()
	const ws, limit = "01JDZ8Y7K3Q4W5E6R7T8Y9A0WW", 100
	day := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	spent := func() string {
		t.Helper()
		if v, ok := budgetCounter(t, st, ws, "2026-11-22")["chars"].(*types.AttributeValueMemberN); ok {
			return v.Value
		}
		return "0"
	}
	first := []string{"DynamoDB.UpdateItem", "DynamoDB.PutItem"}
	again := []string{"DynamoDB.UpdateItem", "DynamoDB.PutItem", "DynamoDB.UpdateItem"}
	refused := []string{"DynamoDB.UpdateItem", "DynamoDB.GetItem"}
	known := []string{"DynamoDB.GetItem"} // this instance saw the day spent: no UpdateItem
	for i, step := range []struct {
		charge string
		chars  int64
		want   bool
		spent  string
		calls  []string
	}{
		{"01JDZ8Y7K3Q4W5E6R7T8Y9A0M1#1", 50, true, "50", first},
		{"01JDZ8Y7K3Q4W5E6R7T8Y9A0M1#1", 50, true, "50", again},    // a retry: given back
		{"01JDZ8Y7K3Q4W5E6R7T8Y9A0M1#2", 60, false, "50", refused}, // the edit's revision: past the budget
		{"01JDZ8Y7K3Q4W5E6R7T8Y9A0M1#2", 50, true, "100", first},   // not recorded when refused
		{"01JDZ8Y7K3Q4W5E6R7T8Y9A0M1#1", 50, true, "100", known},   // the budget is spent, the revision was charged
	} {
		st.Calls.Reset()
		got, err := s.Translation.SpendTranslationCharsOnce(ctx, ws, day, step.chars, limit, step.charge)
		if err != nil || got != step.want {
			t.Fatalf("step %d: got %v, %v; want %v", i, got, err, step.want)
		}
		if calls := st.Calls.Calls(); !reflect.DeepEqual(calls, step.calls) {
			t.Fatalf("step %d: calls %v, want %v", i, calls, step.calls)
		}
		if got := spent(); got != step.spent {
			t.Fatalf("step %d: spent %s, want %s", i, got, step.spent)
		}
	}

	// Twenty concurrent deliveries of one revision on the next day: all
	// may translate, the day is charged once. (Each spends before it gives
	// back, so for a moment the day counts up to 20 × 30: a budget closer
	// than that could refuse a duplicate, which then stores nothing while the
	// one that charged stores the translations.)
	next := day.Add(24 * time.Hour)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			ok, err := s.Translation.SpendTranslationCharsOnce(ctx, ws, next, 30, 1_000, "01JDZ8Y7K3Q4W5E6R7T8Y9A0M3#1")
			if err == nil && !ok {
				err = fmt.Errorf("refused")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent spend: %v", err)
		}
	}
	if v, ok := budgetCounter(t, st, ws, "2026-11-23")["chars"].(*types.AttributeValueMemberN); !ok || v.Value != "30" {
		t.Fatalf("after 20 concurrent spends of one revision: %v; want 30 spent", v)
	}
}

// TestTranslationMemory remembers and recalls units by workspace, pair,
// glossary version, form and text, 100 keys a BatchGetItem.
func TestTranslationMemory(t *testing.T) {
	st, s := newApplyStore(t)
	ctx := context.Background()
	key := func(i int) translation.MemoryKey {
		return translation.MemoryKey{WorkspaceID: "01JDZ8Y7K3Q4W5E6R7T8Y9A0WW", Source: "en", Target: "es", Glossary: "v1",
			Form: translation.Placeholders, Text: fmt.Sprintf(`Build <b id="p1"/> passed %d`, i)}
	}
	entries := map[translation.MemoryKey]string{}
	var keys []translation.MemoryKey
	for i := range 150 {
		entries[key(i)] = fmt.Sprintf(`Construcción <b id="p1"/> pasada %d`, i)
		keys = append(keys, key(i))
	}
	huge := key(1000)
	huge.Text = strings.Repeat("a", 70_000)
	entries[huge] = strings.Repeat("b", 70_000)
	if got, err := s.Translation.Recall(ctx, keys); err != nil || len(got) != 0 {
		t.Fatalf("Recall before: %d, %v; want none", len(got), err)
	}
	st.Calls.Reset()
	if err := s.Translation.Remember(ctx, entries); err != nil {
		t.Fatal(err)
	}
	if n := st.Calls.Total(); n != 6 {
		t.Fatalf("Remember of 150 units: %d calls (%v), want 6 BatchWriteItem (25 a call)", n, st.Calls.Calls())
	}
	// Other versions of each key: another workspace, pair, glossary, form.
	other := []translation.MemoryKey{key(0), key(0), key(0), key(0), key(0)}
	other[0].WorkspaceID = "01JDZ8Y7K3Q4W5E6R7T8Y9A0XX"
	other[1].Target = "fr"
	other[2].Glossary = "v2"
	other[3].Form = translation.HTML
	other[4].Source = "de"
	st.Calls.Reset()
	got, err := s.Translation.Recall(ctx, append(append(append([]translation.MemoryKey{}, keys...), other...), huge))
	if err != nil {
		t.Fatal(err)
	}
	if calls := st.Calls.Calls(); !reflect.DeepEqual(calls, []string{"DynamoDB.BatchGetItem", "DynamoDB.BatchGetItem"}) {
		t.Fatalf("Recall of 156 keys: %v, want two BatchGetItem", calls)
	}
	var missing []string
	for _, k := range keys {
		if got[k] != entries[k] {
			missing = append(missing, k.Text)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 || len(got) != len(keys) {
		t.Fatalf("recalled %d, want exactly the %d remembered (missing %v)", len(got), len(keys), missing)
	}
}

// TestWorkspaceNames reads the demo's members', channels' and bots' names
// with one Query.
func TestWorkspaceNames(t *testing.T) {
	st, s := newApplyStore(t)
	apply(t, s, demo(t), time.Now())
	st.Calls.Reset()
	n, err := s.Translation.WorkspaceNames(context.Background(), demoWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(n.Members)
	sort.Strings(n.Channels)
	sort.Strings(n.Bots)
	if !reflect.DeepEqual(n.Members, []string{"Ana", "Ben", "Chloé"}) || !reflect.DeepEqual(n.Channels, []string{"general", "support"}) ||
		!reflect.DeepEqual(n.Bots, []string{"CI Bot", "Deploy Bot"}) {
		t.Fatalf("names %+v", n)
	}
	if calls := st.Calls.Calls(); !reflect.DeepEqual(calls, []string{"DynamoDB.Query"}) {
		t.Fatalf("calls %v, want one Query", calls)
	}
}
