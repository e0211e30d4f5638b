package dynamo_test

import (
	"testing"

	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/events"
)

// TestWebhookPrefixKnowsTheEventKinds: WebhookPrefix spells the kinds out;
// they are events' kinds, and another kind has no prefix.
func TestWebhookPrefixKnowsTheEventKinds(t *testing.T) {
	for kind, want := range map[string]string{events.KindOutbound: "OWH#", events.KindSupport: "SWH#"} {
		if got, ok := dynamo.WebhookPrefix(kind); !ok || got != want {
			t.Errorf("WebhookPrefix(%q) = %q, %v; want %q", kind, got, ok, want)
		}
	}
	if got, ok := dynamo.WebhookPrefix("inbound"); ok {
		t.Errorf("WebhookPrefix(inbound) = %q, want none", got)
	}
}
