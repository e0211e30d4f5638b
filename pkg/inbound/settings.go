package inbound

import (
	"context"

	"github.com/chatbridge/chat/pkg/chat"
)

// How settings stay correct (contract section 10, "Changes take effect at
// once"): every request reads its webhook's own settings as stored when it
// starts, with one consistent read (SettingsReader), and is judged on
// them; only the workspace and its channels may come from a copy read for
// an earlier request (Cache). A request that starts after a change's
// response therefore sees the change, and one that started before it is
// ordered before it. Nothing is checked again at the acceptance: a check
// of the webhook's item inside every acceptance's transaction made the
// webhook's concurrent posts cancel each other (DynamoDB refuses a
// transaction that meets another one on any of its items, a ConditionCheck
// included).

// SettingsReader reads a webhook's own settings, without its workspace and
// channels: Config.Webhook and Config.Deleted.
type SettingsReader interface {
	// InboundSettings reads webhook id with one consistent read. Errors:
	// EWebhookNotFound when there is no such webhook; EUnavailable.
	InboundSettings(ctx context.Context, id string) (Config, error)
}

// Refresher is a ConfigSource that keeps part of a configuration from an
// earlier request and reads the webhook's settings anew for each.
type Refresher interface {
	// Refresh returns webhook id's configuration with its settings as
	// stored now. Errors as WebhookConfig.
	Refresh(ctx context.Context, id string) (Config, error)
}

var _ Refresher = (*Cache)(nil)

// Refresh implements Refresher. With a cached configuration and a Source
// that is a SettingsReader it reads only the webhook (one call) and keeps
// the cached workspace and channels; an id cached as unknown stays unknown
// for NegativeTTL (ids are made at creation, so an unknown id is never
// created); otherwise it reads everything.
func (c *Cache) Refresh(ctx context.Context, id string) (Config, error) {
	now := c.Now()
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	ok = ok && now.Before(e.expires)
	if ok && e.err != nil {
		return Config{}, e.err
	}
	var cfg Config
	var err error
	if r, isReader := c.Source.(SettingsReader); ok && isReader {
		var fresh Config
		fresh, err = r.InboundSettings(ctx, id)
		cfg = e.cfg
		cfg.Webhook, cfg.Deleted = fresh.Webhook, fresh.Deleted
		if err == nil && fresh.Webhook.WorkspaceID != e.cfg.Workspace.ID {
			// Never the case (a webhook keeps its workspace): read it all.
			cfg, err = c.Source.WebhookConfig(ctx, id)
		}
		if err == nil {
			// The settings are fresh, not the copy: its lifetime stays.
			c.put(id, cacheEntry{cfg: cfg, expires: e.expires})
			return cfg, nil
		}
	} else {
		cfg, err = c.Source.WebhookConfig(ctx, id)
	}
	ttl := c.TTL
	switch {
	case chat.IsCode(err, chat.EWebhookNotFound):
		cfg, ttl = Config{}, c.NegativeTTL
	case err != nil:
		return Config{}, err
	}
	c.put(id, cacheEntry{cfg: cfg, err: err, expires: now.Add(ttl)})
	return cfg, err
}

// put caches e as id's entry.
func (c *Cache) put(id string, e cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCacheEntries {
		c.entries = map[string]cacheEntry{}
	}
	c.entries[id] = e
}

// config reads webhook id's configuration, its settings as stored now.
func (s *Service) config(ctx context.Context, id string) (Config, error) {
	if r, ok := s.Configs.(Refresher); ok {
		return r.Refresh(ctx, id)
	}
	return s.Configs.WebhookConfig(ctx, id)
}
