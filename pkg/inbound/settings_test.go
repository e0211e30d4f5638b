package inbound_test

import (
	"context"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/inbound"
)

// countingConfigs is memConfigs counting its whole reads and its reads of
// a webhook's own settings (an inbound.SettingsReader, as the DynamoDB
// store is).
type countingConfigs struct {
	memConfigs
	reads, settingsReads int
}

func (c *countingConfigs) WebhookConfig(ctx context.Context, id string) (inbound.Config, error) {
	c.reads++
	return c.memConfigs.WebhookConfig(ctx, id)
}

func (c *countingConfigs) InboundSettings(ctx context.Context, id string) (inbound.Config, error) {
	c.settingsReads++
	cfg, err := c.memConfigs.WebhookConfig(ctx, id)
	return inbound.Config{Webhook: cfg.Webhook, Deleted: cfg.Deleted}, err
}

// TestEveryRequestReadsTheSettingsStored: behind a Cache, each request is
// judged on the webhook's settings as stored when it starts, read with one
// call, while its workspace and channels come from the cached copy: a
// secret rotated in is accepted at once, a secret rotated out is refused
// at once, a disabled webhook refuses at once and a re-enabled one posts at
// once. Nothing is checked again at the acceptance (its transaction would
// otherwise meet every concurrent post's).
func TestEveryRequestReadsTheSettingsStored(t *testing.T) {
	ctx := t.Context()
	configs := &countingConfigs{memConfigs: fuzzConfigs()}
	store := newMemStore()
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
	set(func(w *chat.InboundWebhook) { w.SecretHash = chat.HashToken("whsec_new") })
	wantResult(t, "new secret", post("whsec_new"), 202, "")
	wantResult(t, "new secret again", post("whsec_new"), 202, "")
	set(func(w *chat.InboundWebhook) { w.SecretHash = chat.HashToken("whsec_newer") })
	wantResult(t, "replaced secret", post("whsec_new"), 401, chat.EInvalidSecret)
	wantResult(t, "newer secret", post("whsec_newer"), 202, "")
	set(func(w *chat.InboundWebhook) { w.Enabled = false })
	wantResult(t, "disabled", post("whsec_newer"), 404, chat.EWebhookNotFound)
	set(func(w *chat.InboundWebhook) { w.Enabled = true })
	wantResult(t, "re-enabled", post("whsec_newer"), 202, "")
	if len(store.messages) != 4 {
		t.Fatalf("%d messages, want 4: a refused request writes none", len(store.messages))
	}
	if configs.reads != 1 || configs.settingsReads != 6 {
		t.Fatalf("%d whole reads and %d settings reads for 7 requests, want 1 (the cold one) and 6 (one per warm request)", configs.reads, configs.settingsReads)
	}
	// An unknown id is remembered as unknown: a flood of them reads once.
	for range 3 {
		res := svc.Post(ctx, inbound.Request{WebhookID: "01JDZ8Y7K3Q4W5E6R7T8Y9A0ZZ", Body: []byte(`{"content":"hi"}`), ReceivedAt: fuzzNow})
		wantResult(t, "unknown webhook", res, 404, chat.EWebhookNotFound)
	}
	if configs.reads != 2 || configs.settingsReads != 6 {
		t.Fatalf("unknown id thrice: %d whole and %d settings reads, want 2 and 6", configs.reads, configs.settingsReads)
	}
}
