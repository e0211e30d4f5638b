package cursor_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
)

const scope = "outbound:01JD0000000000000000000000"

func newCodec(t testing.TB, key string) *cursor.Codec {
	t.Helper()
	c, err := cursor.New([]byte(key))
	if err != nil {
		t.Fatalf("New(%q): %v", key, err)
	}
	return c
}

// wantInvalid fails unless err is the 422 on field cursor.
func wantInvalid(t *testing.T, err error) {
	t.Helper()
	var e *chat.Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v (%T), want *chat.Error", err, err)
	}
	if e.Code != chat.EValidation || e.Message != "The cursor is invalid." {
		t.Fatalf("got %s %q, want %s %q", e.Code, e.Message, chat.EValidation, "The cursor is invalid.")
	}
	if got := e.Fields["cursor"]; len(got) != 1 || got[0] != "The cursor is invalid." || len(e.Fields) != 1 {
		t.Fatalf("got fields %v, want only cursor", e.Fields)
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"", false}, {"short", false}, {strings.Repeat("k", 15), false},
		{strings.Repeat("k", 16), true}, {strings.Repeat("k", 64), true},
	} {
		c, err := cursor.New([]byte(tc.key))
		if tc.ok != (err == nil) || tc.ok != (c != nil) {
			t.Errorf("New(%d bytes) = %v, %v, want ok %v", len(tc.key), c, err, tc.ok)
		}
	}
}

func TestNewCopiesKey(t *testing.T) {
	key := []byte("0123456789abcdef")
	c, err := cursor.New(key)
	if err != nil {
		t.Fatal(err)
	}
	tok := c.Encode(scope, "p")
	key[0] = 'X'
	if got, err := c.Decode(scope, tok); err != nil || got != "p" {
		t.Fatalf("after changing the caller's key: Decode = %q, %v, want p, nil", got, err)
	}
}

func TestRoundTrip(t *testing.T) {
	c := newCodec(t, "test-key-0123456789abcdef")
	for _, pos := range []string{
		"",
		"a",
		"2026-11-22T10:00:00Z#01JD0000000000000000000001",
		`{"pk":"WS#01JD","sk":"OUT#01JE"}`,
		"ünïcode ✓ 漢字 🎉",
		"with\x00nul and\nnewline",
		strings.Repeat("x", 1024),
		strings.Repeat("y", cursor.MaxPositionLen),
	} {
		tok := c.Encode(scope, pos)
		if len(tok) > cursor.MaxTokenLen {
			t.Fatalf("Encode(%d bytes) is %d characters, over %d", len(pos), len(tok), cursor.MaxTokenLen)
		}
		if strings.ContainsAny(tok, "+/=") {
			t.Fatalf("Encode(%q) = %q, want URL-safe base64 without padding", pos, tok)
		}
		if strings.Contains(tok, scope) {
			t.Fatalf("Encode(%q) = %q carries the scope in clear", pos, tok)
		}
		got, err := c.Decode(scope, tok)
		if err != nil {
			t.Fatalf("Decode(Encode(%q)): %v", pos, err)
		}
		if got != pos {
			t.Fatalf("Decode(Encode(%q)) = %q", pos, got)
		}
		if again := c.Encode(scope, pos); again != tok {
			t.Fatalf("Encode(%q) not deterministic: %q then %q", pos, tok, again)
		}
	}
}

func TestRejectsOtherScope(t *testing.T) {
	c := newCodec(t, "test-key-0123456789abcdef")
	tok := c.Encode("outbound:01JDAAAAAAAAAAAAAAAAAAAAAA", "pos")
	for _, other := range []string{
		"outbound:01JDBBBBBBBBBBBBBBBBBBBBBB", // another workspace
		"support:01JDAAAAAAAAAAAAAAAAAAAAAA",  // another list
		"outbound:01JDAAAAAAAAAAAAAAAAAAAAA",  // a prefix
		"",
	} {
		got, err := c.Decode(other, tok)
		if err == nil {
			t.Fatalf("Decode(%q) = %q, want error", other, got)
		}
		wantInvalid(t, err)
	}
}

// The scope is length-prefixed under the MAC: moving bytes between scope
// and position must not produce a valid cursor.
func TestScopePositionBoundary(t *testing.T) {
	c := newCodec(t, "test-key-0123456789abcdef")
	tok := c.Encode("ab", "c")
	if _, err := c.Decode("a", tok); err == nil {
		t.Fatal("cursor of (ab, c) decoded under scope a, want error")
	}
	shifted := c.Encode("a", "bc")
	if tok[1:] == shifted[1:] {
		t.Fatal("(ab, c) and (a, bc) have the same MAC")
	}
}

func TestRejectsOtherKey(t *testing.T) {
	a := newCodec(t, "test-key-0123456789abcdef")
	b := newCodec(t, "test-key-0123456789abcdeF")
	tok := a.Encode(scope, "pos")
	got, err := b.Decode(scope, tok)
	if err == nil {
		t.Fatalf("Decode under another key = %q, want error", got)
	}
	wantInvalid(t, err)
}

func TestRejectsTamperedByte(t *testing.T) {
	c := newCodec(t, "test-key-0123456789abcdef")
	raw, err := base64.RawURLEncoding.DecodeString(c.Encode(scope, "2026-11-22#01JD"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		for _, bit := range []byte{0x01, 0x80} {
			mut := append([]byte(nil), raw...)
			mut[i] ^= bit
			tok := base64.RawURLEncoding.EncodeToString(mut)
			got, err := c.Decode(scope, tok)
			if err == nil {
				t.Fatalf("byte %d ^ %#x: Decode = %q, want error", i, bit, got)
			}
			wantInvalid(t, err)
		}
	}
	// Dropping or adding a byte anywhere.
	for i := range raw {
		mut := append(append([]byte(nil), raw[:i]...), raw[i+1:]...)
		if _, err := c.Decode(scope, base64.RawURLEncoding.EncodeToString(mut)); err == nil {
			t.Fatalf("without byte %d: Decode succeeded, want error", i)
		}
	}
	if _, err := c.Decode(scope, base64.RawURLEncoding.EncodeToString(append(raw, 0))); err == nil {
		t.Fatal("with a byte appended: Decode succeeded, want error")
	}
}

func TestRejectsGarbage(t *testing.T) {
	c := newCodec(t, "test-key-0123456789abcdef")
	good := c.Encode(scope, "pos")
	long := c.Encode(scope, strings.Repeat("z", cursor.MaxPositionLen+1))
	nonUTF8 := c.Encode(scope, "\xff\xfe")
	for _, tc := range []struct{ name, token string }{
		{"empty", ""},
		{"space", " "},
		{"not base64", "!!!!"},
		{"std alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(good) + "+/"},
		{"padded", good + "=="},
		{"padding only", "===="},
		{"one char", "A"},
		{"too short for a MAC", base64.RawURLEncoding.EncodeToString([]byte{1, 2, 3})},
		{"version only", "AQ"},
		{"16 zero bytes", base64.RawURLEncoding.EncodeToString(make([]byte, 16))},
		{"17 zero bytes", base64.RawURLEncoding.EncodeToString(make([]byte, 17))},
		{"version 1 and zero MAC", base64.RawURLEncoding.EncodeToString(append([]byte{1}, make([]byte, 16)...))},
		{"truncated", good[:len(good)-1]},
		{"extra char", good + "A"},
		{"newline inside", good[:4] + "\n" + good[4:]},
		{"CR LF at end", good + "\r\n"},
		{"leading space", " " + good},
		{"json", `{"position":"pos"}`},
		{"integer offset", "25"},
		{"uuid", "d2b6f0e4-3b8a-4a57-9d1e-2f1b8c9e7a10"},
		{"position too long", long},
		{"over 2048 chars", strings.Repeat("A", cursor.MaxTokenLen+1)},
		{"position not UTF-8", nonUTF8},
		{"NUL", "\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.Decode(scope, tc.token)
			if err == nil {
				t.Fatalf("Decode(%q) = %q, want error", tc.token, got)
			}
			wantInvalid(t, err)
		})
	}
}

// A position longer than MaxPositionLen still encodes, but its cursor is over
// MaxTokenLen; MaxPositionLen is the exact limit.
func TestMaxPositionLen(t *testing.T) {
	c := newCodec(t, "test-key-0123456789abcdef")
	if n := len(c.Encode(scope, strings.Repeat("p", cursor.MaxPositionLen))); n != cursor.MaxTokenLen {
		t.Fatalf("cursor of a MaxPositionLen position is %d characters, want %d", n, cursor.MaxTokenLen)
	}
	if n := len(c.Encode(scope, strings.Repeat("p", cursor.MaxPositionLen+1))); n <= cursor.MaxTokenLen {
		t.Fatalf("cursor of a longer position is %d characters, want over %d", n, cursor.MaxTokenLen)
	}
}

func BenchmarkEncodeDecode(b *testing.B) {
	c := newCodec(b, "test-key-0123456789abcdef")
	pos := "2026-11-22T10:00:00Z#01JD0000000000000000000001"
	b.ReportAllocs()
	for b.Loop() {
		got, err := c.Decode(scope, c.Encode(scope, pos))
		if err != nil || got != pos {
			b.Fatalf("Decode = %q, %v", got, err)
		}
	}
}

func BenchmarkDecodeGarbage(b *testing.B) {
	c := newCodec(b, "test-key-0123456789abcdef")
	tok := strings.Repeat("A", 64)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Decode(scope, tok); err == nil {
			b.Fatal("garbage decoded")
		}
	}
}

// TestOf: no key is no codec (and no error), a short key is New's error,
// and a codec built by Of reads the cursors of one built by New on the
// same key.
func TestOf(t *testing.T) {
	if c, err := cursor.Of(nil); c != nil || err != nil {
		t.Fatalf("Of(nil) = %v, %v; want nil, nil", c, err)
	}
	if _, err := cursor.Of([]byte("short")); err == nil {
		t.Fatal("Of accepted a key shorter than MinKeyLen")
	}
	key := []byte("of-test-cursor-key-0123456789")
	a, err := cursor.Of(key)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cursor.New(key)
	if pos, err := b.Decode("s", a.Encode("s", "p")); err != nil || pos != "p" {
		t.Fatalf("Decode = %q, %v; want p", pos, err)
	}
}
