package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/chat"
)

const (
	// MinKeyLen is the shortest key New accepts.
	MinKeyLen = 16
	// MaxTokenLen is the longest cursor Decode accepts, in characters.
	MaxTokenLen = 2048
	// MaxPositionLen is the longest position, in bytes, whose cursor Decode
	// accepts: what fits in MaxTokenLen after the version and the MAC.
	MaxPositionLen = MaxTokenLen/4*3 - headerLen - macLen
)

const (
	version   = 1
	headerLen = 1  // the version byte
	macLen    = 16 // HMAC-SHA256 truncated to 128 bits
	// label separates this MAC from any other the same key might make.
	label = "chatbridge cursor\x00"
)

// enc rejects non-canonical trailing bits, so that one payload has exactly
// one token.
var enc = base64.RawURLEncoding.Strict()

// Codec encodes and decodes cursors under one key. It is safe for
// concurrent use.
type Codec struct{ key []byte }

// New returns a Codec keyed by key, which it copies. It returns an error if
// key is shorter than MinKeyLen bytes.
func New(key []byte) (*Codec, error) {
	if len(key) < MinKeyLen {
		return nil, errors.New("cursor: key shorter than 16 bytes")
	}
	return &Codec{key: append([]byte(nil), key...)}, nil
}

// Of returns the Codec keyed by key, or nil when key is empty (no cursor
// key is configured: the lists then answer their first page only). Its
// error is New's.
func Of(key []byte) (*Codec, error) {
	if len(key) == 0 {
		return nil, nil
	}
	return New(key)
}

// Encode returns the cursor for position in scope: URL-safe base64 without
// padding of version | position | MAC(version, scope, position). Decode
// rejects the cursor of a position that is not valid UTF-8 or is longer
// than MaxPositionLen bytes (see Fits), so callers must not page on such
// positions.
func (c *Codec) Encode(scope, position string) string {
	raw := make([]byte, 0, headerLen+len(position)+macLen)
	raw = append(raw, version)
	raw = append(raw, position...)
	raw = c.mac(raw, version, scope, position)
	return enc.EncodeToString(raw)
}

// Fits reports whether Decode accepts the cursor Encode makes of position:
// valid UTF-8 of at most MaxPositionLen bytes. A list that pages on a
// position that does not fit could never be followed past it.
func Fits(position string) bool {
	return len(position) <= MaxPositionLen && utf8.ValidString(position)
}

// Fits is the package's Fits, so that a Codec is an httpapi.Cursors.
func (*Codec) Fits(position string) bool { return Fits(position) }

// Decode returns the position carried by token, after checking that c made
// it for scope. An empty token is not a cursor: callers treat an absent
// cursor as the first page before calling Decode.
//
// Decode returns chat.FieldError("cursor", "The cursor is invalid.") for any
// token it did not make for this scope: bad base64, wrong length or
// version, a MAC that does not match (another key, another scope, a changed
// byte), a token longer than MaxTokenLen or a position that is not UTF-8.
func (c *Codec) Decode(scope, token string) (string, error) {
	if len(token) == 0 || len(token) > MaxTokenLen {
		return "", invalid()
	}
	raw, err := enc.DecodeString(token)
	// The decoder skips '\r' and '\n'; a token holding them is not the one
	// Encode made, even if its payload verifies.
	if err != nil || enc.EncodedLen(len(raw)) != len(token) {
		return "", invalid()
	}
	if len(raw) < headerLen+macLen || raw[0] != version {
		return "", invalid()
	}
	position := raw[headerLen : len(raw)-macLen]
	got := raw[len(raw)-macLen:]
	var buf [sha256.Size]byte
	want := c.mac(buf[:0], raw[0], scope, string(position))
	if !hmac.Equal(got, want) {
		return "", invalid()
	}
	if !utf8.Valid(position) {
		return "", invalid()
	}
	return string(position), nil
}

// mac appends the truncated MAC of (v, scope, position) to dst. The scope is
// length-prefixed so that no (scope, position) pair can pass for another.
func (c *Codec) mac(dst []byte, v byte, scope, position string) []byte {
	m := hmac.New(sha256.New, c.key)
	var hdr [len(label) + 1 + binary.MaxVarintLen64]byte
	h := append(hdr[:0], label...)
	h = append(h, v)
	h = binary.AppendUvarint(h, uint64(len(scope)))
	m.Write(h)
	m.Write([]byte(scope))
	m.Write([]byte(position))
	var sum [sha256.Size]byte
	return append(dst, m.Sum(sum[:0])[:macLen]...)
}

func invalid() error { return chat.FieldError("cursor", "The cursor is invalid.") }
