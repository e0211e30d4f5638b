package chat

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"io"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// IDs generates ULIDs: monotonic within one process, so that identifiers
// made in the same millisecond still sort in creation order.
type IDs struct {
	mu      sync.Mutex
	entropy io.Reader
}

// NewIDs returns a generator seeded from crypto/rand.
func NewIDs() *IDs {
	return &IDs{entropy: ulid.Monotonic(rand.Reader, 0)}
}

// New returns a fresh ULID for time t.
func (g *IDs) New(t time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return ulid.MustNew(ulid.Timestamp(t), g.entropy).String()
}

// ValidID reports whether s is a ULID in its canonical form: 26 characters
// of Crockford base32, upper case. Everything that builds a storage key from
// a client-supplied identifier checks this first.
func ValidID(s string) bool {
	if len(s) != ulid.EncodedSize {
		return false
	}
	id, err := ulid.ParseStrict(s)
	return err == nil && id.String() == s
}

// NewToken returns a bearer credential: prefix followed by 256 bits from
// crypto/rand, base64url without padding.
func NewToken(prefix string) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("chat: crypto/rand failed: " + err.Error())
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// HashToken returns the stored form of a bearer credential: lowercase hex
// SHA-256. Tokens carry 256 bits of randomness, so a fast hash is enough and
// lets storage look a token up by its hash.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// HashesEqual compares two stored hashes in constant time.
func HashesEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// MaxTokenLen bounds a bearer credential; longer ones are refused unread.
const MaxTokenLen = 512

// WellFormedToken reports whether token can be a credential at all: not
// empty, at most MaxTokenLen bytes of printable ASCII without spaces.
// Anything else is refused without a lookup.
func WellFormedToken(token string) bool {
	if token == "" || len(token) > MaxTokenLen {
		return false
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// SeatToken is how a room's seat names a guest session: the first 32 hex
// digits (128 bits) of the hash of its token, enough to tell a guest's
// tokens apart.
func SeatToken(tokenHash string) string {
	if len(tokenHash) > 32 {
		return tokenHash[:32]
	}
	return tokenHash
}

// IDTime returns the time part of a ULID, to the millisecond; the zero time
// for a string that is not one.
func IDTime(id string) time.Time {
	u, err := ulid.ParseStrict(id)
	if err != nil {
		return time.Time{}
	}
	return ulid.Time(u.Time()).UTC()
}
