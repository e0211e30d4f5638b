package translation

import (
	"context"
	"sync"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/glossary"
	"github.com/chatbridge/chat/pkg/protect"
)

// DefaultNamesTTL is how long a CachedLexicon reuses a workspace's names.
const DefaultNamesTTL = 5 * time.Minute

// VocabularyStore reads what a Lexicon gives.
type VocabularyStore interface {
	// WorkspaceNames returns the workspace's members', bots' and channels'
	// names.
	WorkspaceNames(ctx context.Context, workspaceID string) (protect.Names, error)
	// GlossaryVersion returns the version of the workspace's glossary, ""
	// for none, read consistently: one small read.
	GlossaryVersion(ctx context.Context, workspaceID string) (string, error)
	// Glossary returns the workspace's glossary with its Version.
	Glossary(ctx context.Context, workspaceID string) (glossary.Glossary, error)
}

// CachedLexicon is a Lexicon over a VocabularyStore that reads each
// workspace's names at most once per NamesTTL (a name added since is
// protected from then on), and its glossary's version on every call, so
// that a glossary replaced before a message is processed applies to it;
// the glossary itself is read again only when its version changed.
type CachedLexicon struct {
	Store VocabularyStore
	// NamesTTL is DefaultNamesTTL when zero.
	NamesTTL time.Duration
	// Now is the clock; time.Now when nil.
	Now chat.Clock

	mu        sync.Mutex
	names     map[string]cachedNames
	glossarys map[string]glossary.Glossary
}

type cachedNames struct {
	names protect.Names
	until time.Time
}

// Vocabulary implements Lexicon: one read of the glossary's version, plus
// the names every NamesTTL and the glossary when it changed.
func (c *CachedLexicon) Vocabulary(ctx context.Context, ws string) (Vocabulary, error) {
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	c.mu.Lock()
	n, okN := c.names[ws]
	g, okG := c.glossarys[ws]
	c.mu.Unlock()
	if !okN || !now.Before(n.until) {
		names, err := c.Store.WorkspaceNames(ctx, ws)
		if err != nil {
			return Vocabulary{}, err
		}
		ttl := c.NamesTTL
		if ttl <= 0 {
			ttl = DefaultNamesTTL
		}
		n = cachedNames{names: names, until: now.Add(ttl)}
		c.mu.Lock()
		if c.names == nil {
			c.names = map[string]cachedNames{}
		}
		c.names[ws] = n
		c.mu.Unlock()
	}
	version, err := c.Store.GlossaryVersion(ctx, ws)
	if err != nil {
		return Vocabulary{}, err
	}
	switch {
	case version == "":
		g = glossary.Glossary{}
	case !okG || g.Version != version:
		if g, err = c.Store.Glossary(ctx, ws); err != nil {
			return Vocabulary{}, err
		}
		c.mu.Lock()
		if c.glossarys == nil {
			c.glossarys = map[string]glossary.Glossary{}
		}
		c.glossarys[ws] = g
		c.mu.Unlock()
	}
	return Vocabulary{Names: n.names, Glossary: g}, nil
}
