package inbound

import (
	"context"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
)

// How cached settings stay correct (contract section 10, "Changes take
// effect at once"): a request is judged on the cached settings, and
//   - an acceptance carries the webhook's version (UpdatedAt) into its own
//     transaction, which checks it (Acceptance.Judged): a request
//     accepted with a rotated-away secret, or by a webhook changed, disabled
//     or deleted meanwhile, writes nothing and is judged again on settings
//     read anew (SettingsChanged);
//   - a refusal the settings could have caused (a wrong secret or
//     signature, a disabled webhook) re-reads the settings once before it
//     is answered, so a new secret or a re-enabled webhook is never refused
//     for a stale copy.

// SettingsReader reads a webhook's own settings, without its workspace and
// channels: Config.Webhook and Config.Deleted.
type SettingsReader interface {
	// InboundSettings reads webhook id with one consistent read. Errors:
	// EWebhookNotFound when there is no such webhook; EUnavailable.
	InboundSettings(ctx context.Context, id string) (Config, error)
}

// Refresher is a ConfigSource that may serve a copy read before a request
// began, and reads it anew on demand.
type Refresher interface {
	// CachedConfig is WebhookConfig; hit reports that the configuration is
	// a copy read for an earlier request.
	CachedConfig(ctx context.Context, id string) (cfg Config, hit bool, err error)
	// Refresh returns webhook id's configuration as stored now. Errors as
	// WebhookConfig.
	Refresh(ctx context.Context, id string) (Config, error)
}

var _ Refresher = (*Cache)(nil)

// CachedConfig implements Refresher.
func (c *Cache) CachedConfig(ctx context.Context, id string) (Config, bool, error) {
	now := c.Now()
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.cfg, true, e.err
	}
	cfg, err := c.WebhookConfig(ctx, id)
	return cfg, false, err
}

// Refresh implements Refresher. With a cached configuration and a Source
// that is a SettingsReader it reads only the webhook (one call) and keeps
// the cached workspace and channels; otherwise it reads everything.
func (c *Cache) Refresh(ctx context.Context, id string) (Config, error) {
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	now := c.Now()
	var cfg Config
	var err error
	if r, isReader := c.Source.(SettingsReader); ok && e.err == nil && isReader {
		var fresh Config
		fresh, err = r.InboundSettings(ctx, id)
		cfg = e.cfg
		cfg.Webhook, cfg.Deleted = fresh.Webhook, fresh.Deleted
		if err == nil && fresh.Webhook.WorkspaceID != e.cfg.Workspace.ID {
			// Never the case (a webhook keeps its workspace): read it all.
			cfg, err = c.Source.WebhookConfig(ctx, id)
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
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= maxCacheEntries {
		c.entries = map[string]cacheEntry{}
	}
	c.entries[id] = cacheEntry{cfg: cfg, err: err, expires: now.Add(ttl)}
	c.mu.Unlock()
	return cfg, err
}

// maxRereads bounds how often one request reads the settings anew: a
// webhook changed again and again while one request is judged gets a 503
// rather than a loop.
const maxRereads = 3

// config reads webhook id's configuration; stale reports a copy read for
// an earlier request (a Refresher's hit).
func (s *Service) config(ctx context.Context, id string) (cfg Config, stale bool, err error) {
	if r, ok := s.Configs.(Refresher); ok {
		return r.CachedConfig(ctx, id)
	}
	cfg, err = s.Configs.WebhookConfig(ctx, id)
	return cfg, false, err
}

// refresh reads webhook id's configuration as stored now.
func (s *Service) refresh(ctx context.Context, id string) (Config, error) {
	if r, ok := s.Configs.(Refresher); ok {
		return r.Refresh(ctx, id)
	}
	return s.Configs.WebhookConfig(ctx, id)
}

// reread reads the webhook's settings anew and makes them the decision's.
// done reports the request was answered instead: the webhook is gone or
// disabled, or the read failed.
func (d *decision) reread(ctx context.Context) (res Result, done bool) {
	d.rereads++
	d.stale = false
	cfg, err := d.svc.refresh(ctx, d.req.WebhookID)
	if err == nil && !cfg.Webhook.Enabled {
		err = errNotFound()
	}
	if err != nil {
		return d.reject(ctx, err), true
	}
	d.cfg = cfg
	d.log.AuthScheme = scheme(cfg)
	return Result{}, false
}

// settingsCould reports whether a credential refusal err may come from
// stale settings: a secret or signature that matched none of the cached
// ones, or a request that carries the other scheme's credential. An
// expired or malformed signature, or no credential at all, is refused
// whatever the settings.
func (d *decision) settingsCould(err error, obj jsonbody.Object) bool {
	switch chat.ErrorCode(err) {
	case chat.EInvalidSecret, chat.EInvalidSignature:
		return true
	case chat.EMissingSignature:
		if d.req.HasSecretHeader {
			return true
		}
		if obj != nil {
			var v chat.Validation
			_, ok := obj.String(&v, "secret", "secret")
			return ok
		}
	case chat.EMissingCredentials:
		return d.req.SignatureHeader != ""
	}
	return false
}
