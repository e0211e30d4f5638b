package translation

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
)

// DefaultBudgetCacheTTL is how long a Budget reuses a workspace's
// translation_chars_per_day before reading it again.
const DefaultBudgetCacheTTL = time.Minute

// BudgetStore keeps each workspace's daily budget of translated characters
// and what it has spent of it (contract section 5, "Cost guard").
type BudgetStore interface {
	// TranslationBudget returns the workspace's translation_chars_per_day
	// (chat.DefaultTranslationCharsPerDay when it sets none).
	TranslationBudget(ctx context.Context, workspaceID string) (int64, error)
	// SpendTranslationChars adds chars to what the workspace has spent on
	// the UTC day of day, atomically and only when the sum stays at most
	// limit; it reports whether it did. Concurrent spenders never take the
	// sum past limit together.
	SpendTranslationChars(ctx context.Context, workspaceID string, day time.Time, chars, limit int64) (bool, error)
}

// OnceSpender is a BudgetStore that charges each message revision once.
type OnceSpender interface {
	// SpendTranslationCharsOnce is SpendTranslationChars, recorded under
	// charge (a message id and revision) in the same atomic write: when
	// charge was already recorded, it spends nothing and reports true.
	SpendTranslationCharsOnce(ctx context.Context, workspaceID string, day time.Time, chars, limit int64, charge string) (bool, error)
}

// Budget is the cost guard: before the translator is called, it charges
// the characters about to be sent against the workspace's budget for the
// current UTC day, which resets at 00:00 UTC. Past the budget, messages are
// delivered untranslated until the reset.
//
// The unit is the character (Unicode code point, as Amazon Translate counts
// them) actually sent to the translator: each unit of the message not in
// the translation memory, in the form it is sent (text and placeholders),
// once per target. A message is charged all its targets or none: readers of
// one message never get a translation in one language and not another.
//
// A store that is a OnceSpender charges each message revision once: a
// redelivery of a revision already charged (a failed language retried, a
// batch retried) is not charged again. Otherwise a redelivery charges what
// it sends again, so the count may exceed what was billed, never fall short
// of it.
type Budget struct {
	Store BudgetStore
	// CacheTTL is how long a workspace's budget is reused;
	// DefaultBudgetCacheTTL when zero.
	CacheTTL time.Duration
	// Exceeded, when set, is told of each message the budget leaves
	// untranslated (for the metric that the alarm watches).
	Exceeded func(ctx context.Context, workspaceID string, chars int64)
	// Log receives a line per message left untranslated; slog.Default()
	// when nil.
	Log *slog.Logger

	mu     sync.Mutex
	limits map[string]cachedLimit
}

type cachedLimit struct {
	limit int64
	until time.Time
}

// Charge spends chars, the characters about to be sent to the translator
// for job's message, at now. It reports whether the translator may be called; false
// with a nil error means the workspace's budget for the day is spent (or
// too small for this message) and the message stays untranslated. Nothing
// is charged, and no call is made, when there is nothing to translate. A
// nil *Budget allows everything.
//
// Calls: one SpendTranslationChars, plus one TranslationBudget per
// workspace every CacheTTL. Errors: the store's, wrapped; the message should
// be processed again later.
func (b *Budget) Charge(ctx context.Context, job messages.Job, chars int64, now time.Time) (bool, error) {
	if b == nil || chars <= 0 {
		return true, nil
	}
	if !chat.ValidID(job.WorkspaceID) {
		// Every accepted message has its workspace: a job without one
		// cannot be charged to anyone, so it is not translated.
		b.log().WarnContext(ctx, "translation: job without a valid workspace_id left untranslated",
			"message_id", job.MessageID)
		return false, nil
	}
	limit, err := b.limit(ctx, job.WorkspaceID, now)
	if err != nil {
		return false, fmt.Errorf("translation: budget of workspace %s: %w", job.WorkspaceID, err)
	}
	var ok bool
	if once, isOnce := b.Store.(OnceSpender); isOnce {
		ok, err = once.SpendTranslationCharsOnce(ctx, job.WorkspaceID, now.UTC(), chars, limit,
			fmt.Sprintf("%s#%d", job.MessageID, job.Rev()))
	} else {
		ok, err = b.Store.SpendTranslationChars(ctx, job.WorkspaceID, now.UTC(), chars, limit)
	}
	if err != nil {
		return false, fmt.Errorf("translation: spend %d characters of workspace %s: %w", chars, job.WorkspaceID, err)
	}
	if !ok {
		b.log().WarnContext(ctx, "translation: daily budget spent; message left untranslated until 00:00 UTC",
			"workspace_id", job.WorkspaceID, "message_id", job.MessageID, "chars", chars,
			"translation_chars_per_day", limit)
		if b.Exceeded != nil {
			b.Exceeded(ctx, job.WorkspaceID, chars)
		}
	}
	return ok, nil
}

// limit returns the workspace's budget, read at most once per CacheTTL.
func (b *Budget) limit(ctx context.Context, ws string, now time.Time) (int64, error) {
	b.mu.Lock()
	c, ok := b.limits[ws]
	b.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.limit, nil
	}
	limit, err := b.Store.TranslationBudget(ctx, ws)
	if err != nil {
		return 0, err
	}
	ttl := b.CacheTTL
	if ttl <= 0 {
		ttl = DefaultBudgetCacheTTL
	}
	b.mu.Lock()
	if b.limits == nil {
		b.limits = map[string]cachedLimit{}
	}
	b.limits[ws] = cachedLimit{limit: limit, until: now.Add(ttl)}
	b.mu.Unlock()
	return limit, nil
}

func (b *Budget) log() *slog.Logger {
	if b.Log != nil {
		return b.Log
	}
	return slog.Default()
}
