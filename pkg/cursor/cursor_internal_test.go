package cursor

import (
	"encoding/base64"
	"testing"

	"github.com/chatbridge/chat/pkg/chat"
)

// A cursor of an unknown version is refused even when its MAC is right, so
// that a future format change cannot be confused with this one.
func TestDecodeRejectsOtherVersion(t *testing.T) {
	c, err := New([]byte("test-key-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []byte{0, 2, 0xff} {
		raw := append([]byte{v}, "pos"...)
		raw = c.mac(raw, v, "s", "pos")
		tok := base64.RawURLEncoding.EncodeToString(raw)
		if got, err := c.Decode("s", tok); !chat.IsCode(err, chat.EValidation) {
			t.Fatalf("version %d: Decode = %q, %v, want %s", v, got, err, chat.EValidation)
		}
	}
	// The same construction with the current version must pass, or the
	// loop above proves nothing.
	raw := c.mac(append([]byte{version}, "pos"...), version, "s", "pos")
	if got, err := c.Decode("s", base64.RawURLEncoding.EncodeToString(raw)); err != nil || got != "pos" {
		t.Fatalf("version %d: Decode = %q, %v, want pos, nil", version, got, err)
	}
}
