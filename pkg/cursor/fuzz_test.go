package cursor_test

import (
	"testing"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
)

// FuzzDecode checks that Decode never panics, fails only with the 422 on
// field cursor, and accepts only tokens that Encode gives back exactly. The
// committed seeds in testdata/fuzz/FuzzDecode include valid cursors made
// under fuzzKey, so mutations reach the MAC check.
func FuzzDecode(f *testing.F) {
	const fuzzKey = "fuzz-key-0123456789abcdef"
	c := newCodec(f, fuzzKey)
	f.Fuzz(func(t *testing.T, scope, token string) {
		pos, err := c.Decode(scope, token)
		if err != nil {
			if !chat.IsCode(err, chat.EValidation) {
				t.Fatalf("Decode(%q, %q): got %v, want %s", scope, token, err, chat.EValidation)
			}
			return
		}
		if again := c.Encode(scope, pos); again != token {
			t.Fatalf("Decode(%q, %q) = %q, which encodes to %q", scope, token, pos, again)
		}
		if len(token) > cursor.MaxTokenLen || len(pos) > cursor.MaxPositionLen {
			t.Fatalf("Decode(%q, %q) accepted an over-long cursor", scope, token)
		}
	})
}
