package attempt

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

// MaxStep bounds a DELIVERY_SCHEDULE step and a Retry-After. A retry waits
// on the queue as a chain of delayed messages, so no SQS limit bounds it;
// a day keeps a whole schedule well inside the delivery log's 30 days.
const MaxStep = 24 * time.Hour

// MaxRetryAfterExtra bounds how much a Retry-After may add to the schedule.
const MaxRetryAfterExtra = time.Hour

// ParseSchedule reads DELIVERY_SCHEDULE: comma-separated Go durations, each
// positive and at most MaxStep. Empty input is DefaultSchedule.
func ParseSchedule(s string) ([]time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return DefaultSchedule, nil
	}
	var out []time.Duration
	for _, f := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 || d > MaxStep {
			return nil, fmt.Errorf("delivery: DELIVERY_SCHEDULE: %q is not a duration in (0, 24h]", f)
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
		if n > int64(MaxStep/time.Second) {
			return MaxStep
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return min(t.Sub(now), MaxStep)
	}
	return 0
}

// nextDelay is the delay after the failed attempt number n of this run
// (1-based: the first attempt, or a redelivery's) and false when the
// schedule is spent. A Retry-After longer than the schedule's delay
// replaces it, by at most MaxRetryAfterExtra more.
func nextDelay(schedule []time.Duration, n int, u float64, after time.Duration) (time.Duration, bool) {
	if n < 1 || n > len(schedule) {
		return 0, false
	}
	d := Jitter(schedule[n-1], u)
	if after > d {
		d = min(after, schedule[n-1]+MaxRetryAfterExtra)
	}
	return d, true
}
