// Package racetest lets a test whose cost is the size of what it moves
// (megabytes of JSON through the SDK and the local stack), not what runs
// concurrently, run without the race detector, which multiplies that cost
// three to five times: under -race it skips, and `make test` runs it in a
// pass of its own without the detector (scripts/payload-tests finds every
// test that calls Payload, so there is no list to keep). A test that
// exercises concurrency must not call it.
package racetest

import "testing"

// Payload skips t under the race detector, saying where it runs instead.
func Payload(t testing.TB) {
	t.Helper()
	if Enabled {
		t.Skip("moves megabytes, exercises no concurrency: make test runs it without the race detector (make test-payload)")
	}
}
