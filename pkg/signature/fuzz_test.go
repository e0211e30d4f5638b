package signature_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/signature"
)

// FuzzParse checks that Parse never panics, only fails with the contract's
// header codes, and that what it accepts survives Format and Parse again.
// Seeds live in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, header string) {
		p, err := signature.Parse(header)
		if err != nil {
			if c := chat.ErrorCode(err); c != chat.EMissingSignature && c != chat.EInvalidSignatureHeader {
				t.Fatalf("Parse(%q): got code %s, want %s or %s", header, c, chat.EMissingSignature, chat.EInvalidSignatureHeader)
			}
			return
		}
		if p.T < 0 || p.T > 999999999999 || len(p.V1) == 0 || len(p.V1) > 32 {
			t.Fatalf("Parse(%q) = %+v, out of bounds", header, p)
		}
		again := signature.Format(p.T, p.V1...)
		q, err := signature.Parse(again)
		if err != nil {
			t.Fatalf("Parse(Format(Parse(%q))) = %v, want %+v", header, err, p)
		}
		if q.T != p.T || !slices.Equal(q.V1, p.V1) {
			t.Fatalf("Parse(Format(Parse(%q))) = %+v, want %+v", header, q, p)
		}
	})
}

// FuzzVerify checks that Verify never panics, never accepts a header without
// the right signature, and always accepts one that adds the right signature
// to the fuzzed header.
func FuzzVerify(f *testing.F) {
	f.Add("t=1767225600,v1=39681d0bbbcf7a0403672b5a4ebed72e0826439c7e0c05177631292ed701dd10", []byte(`{"content":"hello"}`))
	f.Add("t=1767225600,v1=00", []byte{})
	f.Add("", []byte("x"))
	f.Add("t=1767225600"+strings.Repeat(",v1=a", 31), []byte("x")) // no room for one more v1
	secret := []byte("whsec_test_secret")
	now := time.Unix(1767225600, 0)
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		good := signature.Sign(secret, now.Unix(), body)
		matched, err := signature.Verify(header, secret, body, now)
		if err == nil && matched != good {
			t.Fatalf("Verify(%q) accepted %q, want only %s", header, matched, good)
		}
		if err != nil && matched != "" {
			t.Fatalf("Verify(%q) returned %q with error %v", header, matched, err)
		}
		p, err := signature.Parse(header)
		// Adding a v1 must keep the header within 32 items (t counts) and
		// 8192 bytes, or Parse rightly refuses it.
		if err != nil || p.T != now.Unix() || len(p.V1) > 30 {
			return
		}
		withGood := signature.Format(p.T, append(p.V1, good)...)
		if len(withGood) > 8192 {
			return
		}
		if m, err := signature.Verify(withGood, secret, body, now); err != nil || m != good {
			t.Fatalf("Verify(%q) = %q, %v, want %s", withGood, m, err, good)
		}
	})
}
