package apertium_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/chatbridge/chat/internal/apyserver"
)

// apy is the apertium-apy the tests share; nil when it could not start, and
// then missing says why.
var (
	apy     *apyserver.Server
	missing error
)

// TestMain starts one apertium-apy with the installed pairs for the
// package's tests and stops it, by its process group, when they end.
func TestMain(m *testing.M) {
	if missing = apyserver.Missing(apyserver.DefaultModesDir, "eng-spa", "spa-eng"); missing == nil {
		apy, missing = apyserver.Start(context.Background(), 0, apyserver.DefaultModesDir)
	}
	if missing != nil {
		fmt.Fprintf(os.Stderr, "\n*** apertium: the tests against a real apertium-apy WILL SKIP: %v\n*** `make test` installs apertium-apy and apertium-eng-spa via scripts/ensure-test-tools.\n\n", missing)
	}
	code := m.Run()
	apy.Stop()
	os.Exit(code)
}

// realAPY returns the shared server's URL, or skips t loudly saying what is
// missing.
func realAPY(t *testing.T) string {
	t.Helper()
	if apy == nil {
		t.Skipf("SKIPPED, NOT PASSED: no real apertium-apy with eng-spa: %v. `make test` installs it via scripts/ensure-test-tools.", missing)
	}
	return apy.URL
}
