package inbound_test

import (
	"context"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/inbound"
)

// countingConfigs is memConfigs counting its reads.
type countingConfigs struct {
	memConfigs
	reads int
}

func (c *countingConfigs) WebhookConfig(ctx context.Context, id string) (inbound.Config, error) {
	c.reads++
	return c.memConfigs.WebhookConfig(ctx, id)
}

// judgingStore is memStore with the DynamoDB store's settings check: an
// acceptance judged on settings that are no longer stored writes nothing.
type judgingStore struct {
	*memStore
	configs *countingConfigs
}

func (s judgingStore) Accept(ctx context.Context, a inbound.Acceptance, now time.Time) (inbound.Outcome, inbound.Record, error) {
	if a.Judged != nil {
		if cur, ok := s.configs.memConfigs[a.Judged.ID]; !ok || cur.Webhook != *a.Judged {
			return inbound.SettingsChanged, inbound.Record{}, nil
		}
	}
	return s.memStore.Accept(ctx, a, now)
}

// TestCachedSettingsNeverAnswerAlone: behind a Cache, a secret rotated in
// is accepted at once (the refusal re-reads), a secret rotated out is
// refused at once (the acceptance finds the settings changed and judges
// again), a disabled webhook re-enabled posts at once; a refusal on
// settings just read re-reads nothing.
func TestCachedSettingsNeverAnswerAlone(t *testing.T) {
	ctx := t.Context()
	configs := &countingConfigs{memConfigs: fuzzConfigs()}
	store := judgingStore{memStore: newMemStore(), configs: configs}
	svc := &inbound.Service{Configs: &inbound.Cache{Source: configs, TTL: time.Hour, NegativeTTL: time.Hour, Now: func() time.Time { return fuzzNow }},
		Quota: &memQuota{}, Store: store, IDs: chat.NewIDs(), Now: func() time.Time { return fuzzNow }}
	post := func(secret string) inbound.Result {
		return svc.Post(ctx, inbound.Request{WebhookID: fuzzStatic, Body: []byte(`{"content":"hi"}`), ReceivedAt: fuzzNow,
			SecretHeader: secret, HasSecretHeader: true})
	}
	set := func(f func(*chat.InboundWebhook)) {
		cfg := configs.memConfigs[fuzzStatic]
		f(&cfg.Webhook)
		configs.memConfigs[fuzzStatic] = cfg
	}
	wantResult(t, "cold, wrong secret", post("wrong"), 401, chat.EInvalidSecret)
	if configs.reads != 1 {
		t.Fatalf("cold refusal: %d reads, want 1 (settings just read are not read again)", configs.reads)
	}
	set(func(w *chat.InboundWebhook) { w.SecretHash = chat.HashToken("whsec_new") })
	wantResult(t, "new secret, cached old", post("whsec_new"), 202, "")
	if configs.reads != 2 {
		t.Fatalf("new secret: %d reads, want 2 (the cached refusal re-read)", configs.reads)
	}
	wantResult(t, "new secret again, cached", post("whsec_new"), 202, "")
	set(func(w *chat.InboundWebhook) { w.SecretHash = chat.HashToken("whsec_newer") })
	wantResult(t, "replaced secret, cached", post("whsec_new"), 401, chat.EInvalidSecret)
	wantResult(t, "newer secret", post("whsec_newer"), 202, "")
	set(func(w *chat.InboundWebhook) { w.Enabled = false })
	wantResult(t, "disabled, cached enabled", post("whsec_newer"), 404, chat.EWebhookNotFound)
	set(func(w *chat.InboundWebhook) { w.Enabled = true })
	wantResult(t, "re-enabled, cached disabled", post("whsec_newer"), 202, "")
	if len(store.messages) != 4 {
		t.Fatalf("%d messages, want 4: a refused request writes none", len(store.messages))
	}
}
