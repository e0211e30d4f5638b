package samtemplate_test

import (
	"fmt"
	"testing"
	"time"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/samtemplate"
)

// TestEventSourcesOfTheTemplate: the mappings the local run emulates, as
// template.yaml declares them (Lambda's defaults where it is silent).
func TestEventSourcesOfTheTemplate(t *testing.T) {
	tmpl, err := samtemplate.Parse(chatbundle.Template)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fn, typ string
		timeout time.Duration
		want    []string
	}{
		{"OutboxRelayFunction", "DynamoDB", 10 * time.Second,
			[]string{"ChatTable TRIM_HORIZON batch 100 window 1s rbif true retries 1000 age 24h0m0s bisect true parallel 1 onfailure RelayFailureQueue filters 5 concurrency 0"}},
		{"RealtimePushFunction", "DynamoDB", 10 * time.Second,
			[]string{"ChatTable LATEST batch 10 window 0s rbif true retries 2 age 1m0s bisect true parallel 4 onfailure RealtimePushFailureQueue filters 3 concurrency 0"}},
		{"TranslateFunction", "SQS", 30 * time.Second,
			[]string{"TranslationQueue  batch 10 window 1s rbif true retries -1 age 0s bisect false parallel 1 onfailure  filters 0 concurrency 20"}},
		// Push jobs, one a worker, many workers at once.
		{"RealtimeFanoutFunction", "SQS", 10 * time.Second, []string{
			"RealtimeFanoutQueue  batch 1 window 0s rbif true retries -1 age 0s bisect false parallel 1 onfailure  filters 0 concurrency 50"}},
		// Three lanes, each with its own concurrency (docs/delivery.md).
		{"DeliverWebhooksFunction", "SQS", 30 * time.Second, []string{
			"DeliveryQueue  batch 10 window 1s rbif true retries -1 age 0s bisect false parallel 1 onfailure  filters 0 concurrency 100",
			"SlowDeliveryQueue  batch 10 window 1s rbif true retries -1 age 0s bisect false parallel 1 onfailure  filters 0 concurrency 5",
			"DeliveryWaitQueue  batch 10 window 1s rbif true retries -1 age 0s bisect false parallel 1 onfailure  filters 0 concurrency 5"}},
	} {
		all, err := tmpl.EventSources(tc.fn)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, es := range all {
			if es.Type != tc.typ {
				continue
			}
			got = append(got, fmt.Sprintf("%s %s batch %d window %v rbif %v retries %d age %v bisect %v parallel %d onfailure %s filters %d concurrency %d",
				es.Source, es.StartingPosition, es.BatchSize, es.BatchingWindow, es.ReportBatchItemFailures, es.MaximumRetryAttempts,
				es.MaximumRecordAge, es.Bisect, es.ParallelizationFactor, es.OnFailure, len(es.Filters), es.MaximumConcurrency))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: got %q, want %q", tc.fn, got, tc.want)
		}
		if len(tc.want) == 1 {
			if _, err := tmpl.EventSource(tc.fn, tc.typ); err != nil {
				t.Errorf("%s: EventSource: %v", tc.fn, err)
			}
		}
		if got := tmpl.Timeout(tc.fn); got != tc.timeout {
			t.Errorf("%s: timeout %v, want %v", tc.fn, got, tc.timeout)
		}
	}
	if _, err := tmpl.EventSource("DeliverWebhooksFunction", "SQS"); err == nil {
		t.Errorf("DeliverWebhooksFunction has two SQS events: EventSource, which wants one, got no error")
	}
	if _, err := tmpl.EventSource("JoinRoomFunction", "SQS"); err == nil {
		t.Errorf("JoinRoomFunction has no SQS event: got no error")
	}
}
