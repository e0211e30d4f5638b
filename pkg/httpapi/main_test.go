package httpapi_test

import (
	"io"
	"log/slog"
	"os"
	"testing"
)

// TestMain silences the per-request log lines (TEST_LOG=1 shows them); the
// benchmarks still pay for building each line, as production does.
func TestMain(m *testing.M) {
	if os.Getenv("TEST_LOG") == "" {
		slog.SetDefault(slog.New(slog.NewJSONHandler(io.Discard, nil)))
	}
	os.Exit(m.Run())
}
