package chat

import "time"

// FormatTime renders t as the contract's timestamp: RFC 3339 in UTC, whole
// seconds (2026-11-22T10:00:00Z).
func FormatTime(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// ParseTime parses an RFC 3339 timestamp with any offset.
func ParseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }

// Clock is the source of the current time; tests pass a fixed one.
type Clock func() time.Time
