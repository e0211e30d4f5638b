package inbound

import (
	"context"
	"sync"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
)

// Config is what the inbound path needs to know about a webhook.
type Config struct {
	Webhook   chat.InboundWebhook
	Workspace chat.Workspace
	// Channels holds the ids of the workspace's channels, for the
	// channel_id override.
	Channels map[string]bool
	// Deleted reports a deleted webhook (Webhook.Enabled is then false):
	// deletion is final, so its refusal needs no second look.
	Deleted bool
}

// ConfigSource loads a webhook's configuration.
type ConfigSource interface {
	// WebhookConfig returns the configuration of webhook id. Errors:
	// EWebhookNotFound when there is no such webhook; EUnavailable.
	WebhookConfig(ctx context.Context, id string) (Config, error)
}

// Cache keeps webhook configurations in memory for TTL, and unknown ids for
// NegativeTTL, so that a warm function reads only the webhook's own
// settings (Refresh, one consistent GetItem) and not its workspace and
// channels again (see settings.go).
type Cache struct {
	Source      ConfigSource
	TTL         time.Duration
	NegativeTTL time.Duration
	Now         chat.Clock

	mu      sync.Mutex
	entries map[string]cacheEntry
}

type cacheEntry struct {
	cfg     Config
	err     error
	expires time.Time
}

// maxCacheEntries bounds memory against a flood of random webhook ids.
const maxCacheEntries = 4096

// WebhookConfig implements ConfigSource.
func (c *Cache) WebhookConfig(ctx context.Context, id string) (Config, error) {
	now := c.Now()
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.cfg, e.err
	}
	cfg, err := c.Source.WebhookConfig(ctx, id)
	ttl := c.TTL
	switch {
	case chat.IsCode(err, chat.EWebhookNotFound):
		ttl = c.NegativeTTL
	case err != nil:
		return Config{}, err // never cache a failure of the store
	}
	c.put(id, cacheEntry{cfg: cfg, err: err, expires: now.Add(ttl)})
	return cfg, err
}
