package idempotency_test

import (
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/idempotency"
)

func TestValidKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"", false},
		{"a", true},
		{"build-1042,retry", true}, // commas mean the same in AWS and locally
		{strings.Repeat("k", idempotency.MaxKeyLen), true},
		{strings.Repeat("k", idempotency.MaxKeyLen+1), false},
		{"tab\there", false},
		{"del\x7f", false},
		{"naïve", false},
		{"\u2028", false},
		{" ~", true},
	} {
		if got := idempotency.ValidKey(tc.key); got != tc.want {
			t.Errorf("ValidKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

func TestFingerprintSeparatesFields(t *testing.T) {
	a := idempotency.Fingerprint("C1", "hello", false)
	for name, other := range map[string]string{
		"channel": idempotency.Fingerprint("C2", "hello", false),
		"content": idempotency.Fingerprint("C1", "hello!", false),
		"skip":    idempotency.Fingerprint("C1", "hello", true),
		// A field boundary cannot move: ("C1h", "ello") is another request.
		"boundary": idempotency.Fingerprint("C1h", "ello", false),
	} {
		if other == a {
			t.Errorf("changing the %s keeps the fingerprint %s", name, a)
		}
	}
	if idempotency.Fingerprint("C1", "hello", false) != a {
		t.Error("the same request has two fingerprints")
	}
	if idempotency.HashKey("k") == idempotency.HashKey("K") || len(idempotency.HashKey("k")) != 64 {
		t.Error("HashKey is not a case-sensitive hex SHA-256")
	}
}
