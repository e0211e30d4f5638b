package chat_test

import (
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/chat"
)

func TestValidKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"", false},
		{"a", true},
		{"build-1042,retry", true}, // commas mean the same in AWS and locally
		{strings.Repeat("k", chat.MaxIdempotencyKeyLen), true},
		{strings.Repeat("k", chat.MaxIdempotencyKeyLen+1), false},
		{"tab\there", false},
		{"del\x7f", false},
		{"naïve", false},
		{"\u2028", false},
		{" ~", true},
	} {
		if got := chat.ValidIdempotencyKey(tc.key); got != tc.want {
			t.Errorf("ValidKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

func TestFingerprintSeparatesFields(t *testing.T) {
	a := chat.IdempotencyFingerprint("C1", "hello", false)
	for name, other := range map[string]string{
		"channel": chat.IdempotencyFingerprint("C2", "hello", false),
		"content": chat.IdempotencyFingerprint("C1", "hello!", false),
		"skip":    chat.IdempotencyFingerprint("C1", "hello", true),
		// A field boundary cannot move: ("C1h", "ello") is another request.
		"boundary": chat.IdempotencyFingerprint("C1h", "ello", false),
	} {
		if other == a {
			t.Errorf("changing the %s keeps the fingerprint %s", name, a)
		}
	}
	if chat.IdempotencyFingerprint("C1", "hello", false) != a {
		t.Error("the same request has two fingerprints")
	}
	if chat.HashIdempotencyKey("k") == chat.HashIdempotencyKey("K") || len(chat.HashIdempotencyKey("k")) != 64 {
		t.Error("HashKey is not a case-sensitive hex SHA-256")
	}
}

// TestChangeFingerprint: an edit or deletion is the same request only with
// the same method, message, channel and content, and never a post.
func TestChangeFingerprint(t *testing.T) {
	a := chat.ChangeFingerprint("PATCH", "M1", "C1", "hello")
	for name, other := range map[string]string{
		"method":  chat.ChangeFingerprint("DELETE", "M1", "C1", "hello"),
		"message": chat.ChangeFingerprint("PATCH", "M2", "C1", "hello"),
		"channel": chat.ChangeFingerprint("PATCH", "M1", "C2", "hello"),
		"content": chat.ChangeFingerprint("PATCH", "M1", "C1", "hello!"),
		"a post":  chat.IdempotencyFingerprint("C1", "hello", false),
	} {
		if other == a {
			t.Errorf("another %s gives the same fingerprint", name)
		}
	}
	if chat.ChangeFingerprint("PATCH", "M1", "C1", "hello") != a {
		t.Fatal("the same change gives another fingerprint")
	}
}
