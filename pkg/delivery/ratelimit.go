package delivery

import (
	"context"
	"time"
)

// Limiter counts a webhook's deliveries per second across every instance
// of the delivery function (contract section 14: rate_limit is kept by
// the webhook, not by one instance).
type Limiter interface {
	// Take counts one delivery to w in the second of at, and returns how
	// many that second has counted, this one included. Errors:
	// EUnavailable.
	Take(ctx context.Context, w Webhook, at time.Time) (int, error)
}

// overLimit returns how long a delivery to w must wait for its webhook's
// rate_limit (0: go now). A delivery counted n-th in its second, past the
// limit, waits for the second it would have had in line, (n-1)/limit
// seconds on (at most MaxQueueDelay), so that a burst spreads over the
// seconds after it instead of coming back all at once.
func (d *Deliverer) overLimit(ctx context.Context, w Webhook, now time.Time) (time.Duration, error) {
	if w.RateLimit <= 0 || d.Limiter == nil {
		return 0, nil
	}
	n, err := d.Limiter.Take(ctx, w, now)
	if err != nil {
		return 0, err
	}
	if n <= w.RateLimit {
		return 0, nil
	}
	slot := time.Duration((n-1)/w.RateLimit) * time.Second
	wait := now.Truncate(time.Second).Add(slot).Sub(now)
	return min(max(wait, dueSlack), MaxQueueDelay), nil
}
