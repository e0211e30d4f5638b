package attempt

import (
	"context"
	"time"

	"github.com/chatbridge/chat/pkg/delivery"
)

// overLimit returns how long a delivery to w must wait for its webhook's
// rate_limit (0: go now). A delivery counted n-th in its second, past the
// limit, waits for the second it would have had in line, (n-1)/limit
// seconds on (at most MaxQueueDelay), so that a burst spreads over the
// seconds after it instead of coming back all at once.
func (d *Deliverer) overLimit(ctx context.Context, w delivery.Webhook, now time.Time) (time.Duration, error) {
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
	return min(max(wait, dueSlack), delivery.MaxQueueDelay), nil
}
