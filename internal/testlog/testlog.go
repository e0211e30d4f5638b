// Package testlog quiets the service's log in tests.
package testlog

import (
	"io"
	"log/slog"
	"os"
)

// Quiet sends the default logger to a JSON handler that writes nowhere,
// unless TEST_LOG is set: the per-request lines drown a test's output and,
// written between a benchmark's name and its figures, cut the result lines
// that make bench reads. Each line is still built, as in production, so
// the benchmarks pay for it.
func Quiet() {
	if os.Getenv("TEST_LOG") == "" {
		slog.SetDefault(slog.New(slog.NewJSONHandler(io.Discard, nil)))
	}
}
