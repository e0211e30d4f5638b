package roomsapi_test

import (
	"io"
	"log/slog"
	"os"
	"testing"
)

// TestMain silences the per-request log lines (TEST_LOG=1 shows them), as
// httpapi's tests do: written to the test's output, they cut the
// benchmarks' result lines, which make bench then loses. The benchmarks
// still pay for building each line, as production does.
func TestMain(m *testing.M) {
	if os.Getenv("TEST_LOG") == "" {
		slog.SetDefault(slog.New(slog.NewJSONHandler(io.Discard, nil)))
	}
	os.Exit(m.Run())
}
