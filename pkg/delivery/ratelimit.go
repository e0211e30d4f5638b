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
