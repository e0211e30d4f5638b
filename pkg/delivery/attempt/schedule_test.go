package attempt

import (
	"net/http"
	"testing"
	"time"
)

func TestNextDelay(t *testing.T) {
	s := DefaultSchedule
	cases := []struct {
		n     int
		u     float64
		after time.Duration
		want  time.Duration
		ok    bool
	}{
		{1, 0.5, 0, 5 * time.Second, true},
		{1, 0, 0, 4 * time.Second, true},                         // -20%
		{2, 0.999999, 0, 6 * time.Minute, true},                  // +20%, truncated below
		{7, 0.5, 0, 10 * time.Hour, true},                        // the last retry
		{8, 0.5, 0, 0, false},                                    // spent: failed
		{0, 0.5, 0, 0, false},                                    // no attempt yet
		{1, 0.5, 30 * time.Second, 30 * time.Second, true},       // Retry-After longer
		{1, 0.5, 3 * time.Hour, time.Hour + 5*time.Second, true}, // at most 1 h more
		{2, 0.5, time.Second, 5 * time.Minute, true},             // shorter: the schedule's
		{7, 0.5, 13 * time.Hour, 11 * time.Hour, true},           // at most 1 h more
		{6, 0.999999, 0, 12 * time.Hour, true},                   // 10 h +20%: past SQS's 12 h of visibility
		{6, 0.5, 11 * time.Hour, 11 * time.Hour, true},           // within 1 h more
	}
	for _, c := range cases {
		got, ok := nextDelay(s, c.n, c.u, c.after)
		if ok != c.ok || (ok && got.Round(time.Second) != c.want.Round(time.Second)) {
			t.Errorf("nextDelay(n=%d, u=%v, after=%v) = %v, %v; want %v, %v", c.n, c.u, c.after, got, ok, c.want, c.ok)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":            0,
		"120":         2 * time.Minute,
		" 5 ":         5 * time.Second,
		"-3":          0,
		"0":           0,
		"99999999999": MaxStep,
		"soon":        0,
		now.Add(time.Hour).Format(http.TimeFormat):  time.Hour,
		now.Add(-time.Hour).Format(http.TimeFormat): 0,
	}
	for h, want := range cases {
		if got := retryAfter(h, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", h, got, want)
		}
	}
}

func TestParseSchedule(t *testing.T) {
	if s, err := ParseSchedule(""); err != nil || len(s) != 7 {
		t.Fatalf("ParseSchedule(\"\") = %v, %v; want the default", s, err)
	}
	if s, err := ParseSchedule("10ms, 1s,2m,11h59m,24h"); err != nil || len(s) != 5 || s[1] != time.Second || s[4] != MaxStep {
		t.Fatalf("ParseSchedule = %v, %v", s, err)
	}
	for _, bad := range []string{"1s,,2s", "0s", "-1s", "25h", "x"} {
		if _, err := ParseSchedule(bad); err == nil {
			t.Errorf("ParseSchedule(%q): got nil error", bad)
		}
	}
}

func TestClassify(t *testing.T) {
	if got := classify(http.ErrHandlerTimeout); got != ErrConnectionFailed {
		t.Fatalf("classify = %s", got)
	}
}
