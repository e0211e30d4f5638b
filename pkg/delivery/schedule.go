package delivery

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultSchedule are the delays before the retries of a failed delivery:
// after the eighth attempt fails, the delivery has failed.
var DefaultSchedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// MaxDelay is the longest delay SQS can hold a message back by changing its
// visibility (12 hours).
const MaxDelay = 12 * time.Hour

// MaxRetryAfterExtra bounds how much a Retry-After may add to the schedule.
const MaxRetryAfterExtra = time.Hour

// ParseSchedule reads DELIVERY_SCHEDULE: comma-separated Go durations, each
// positive and at most MaxDelay. Empty input is DefaultSchedule.
func ParseSchedule(s string) ([]time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return DefaultSchedule, nil
	}
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 || d > MaxDelay {
			return nil, fmt.Errorf("delivery: DELIVERY_SCHEDULE: %q is not a duration in (0, 12h]", f)
		}
		out = append(out, d)
	}
	return out, nil
}

// Jitter spreads d by ±20%: u is uniform in [0, 1).
func Jitter(d time.Duration, u float64) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*u))
}

// retryAfter reads a Retry-After header, seconds or an HTTP date, as a
// delay from now; 0 when absent or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if n, err := strconv.ParseInt(h, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > int64(MaxDelay/time.Second) {
			return MaxDelay
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return min(t.Sub(now), MaxDelay)
	}
	return 0
}

// nextDelay is the delay after the failed attempt number n of this queue
// message (1-based) and false when the schedule is spent. A Retry-After
// longer than the schedule's delay replaces it, by at most
// MaxRetryAfterExtra more; SQS's 12 hours bound it all.
func nextDelay(schedule []time.Duration, n int, u float64, after time.Duration) (time.Duration, bool) {
	if n < 1 || n > len(schedule) {
		return 0, false
	}
	d := Jitter(schedule[n-1], u)
	if after > d {
		d = min(after, schedule[n-1]+MaxRetryAfterExtra)
	}
	return min(d, MaxDelay), true
}
