package delivery

import (
	"context"
	"time"
)

// Limiter counts a webhook's deliveries per second across every instance
// of the delivery function (contract section 14: rate_limit is kept by
// the webhook, not by one instance).
type Limiter interface {
	// Take counts one delivery to w in the second of at, and returns its
	// place in line: at most w.RateLimit for a delivery that may go in
	// that second, otherwise one that waits (place-1)/w.RateLimit seconds.
	// No second grants more than w.RateLimit places within it. (On one
	// counter the place is how many the second has counted, this one
	// included; a store that spreads the count keeps a line per share of
	// the limit.) Errors: EUnavailable.
	Take(ctx context.Context, w Webhook, at time.Time) (int, error)
}
