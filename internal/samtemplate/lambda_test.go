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
		want    string
	}{
		{"OutboxRelayFunction", "DynamoDB", 10 * time.Second,
			"ChatTable TRIM_HORIZON batch 100 window 1s rbif true retries 1000 age 24h0m0s bisect true parallel 1 onfailure RelayFailureQueue filters 5"},
		{"RealtimePushFunction", "DynamoDB", 10 * time.Second,
			"ChatTable LATEST batch 10 window 0s rbif true retries 2 age 1m0s bisect true parallel 4 onfailure  filters 2"},
		{"TranslateFunction", "SQS", 30 * time.Second,
			"TranslationQueue  batch 10 window 1s rbif true retries -1 age 0s bisect false parallel 1 onfailure  filters 0"},
		{"DeliverWebhooksFunction", "SQS", 30 * time.Second,
			"DeliveryQueue  batch 10 window 1s rbif true retries -1 age 0s bisect false parallel 1 onfailure  filters 0"},
	} {
		es, err := tmpl.EventSource(tc.fn, tc.typ)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%s %s batch %d window %v rbif %v retries %d age %v bisect %v parallel %d onfailure %s filters %d",
			es.Source, es.StartingPosition, es.BatchSize, es.BatchingWindow, es.ReportBatchItemFailures, es.MaximumRetryAttempts,
			es.MaximumRecordAge, es.Bisect, es.ParallelizationFactor, es.OnFailure, len(es.Filters))
		if got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.fn, got, tc.want)
		}
		if got := tmpl.Timeout(tc.fn); got != tc.timeout {
			t.Errorf("%s: timeout %v, want %v", tc.fn, got, tc.timeout)
		}
	}
	if _, err := tmpl.EventSource("JoinRoomFunction", "SQS"); err == nil {
		t.Errorf("JoinRoomFunction has no SQS event: got no error")
	}
}
