package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
)

// Header is the request header that carries the signature.
const Header = "X-Service-Signature"

// Tolerance is how far, in either direction, the signed timestamp may be
// from the receiver's clock.
const Tolerance = 300 * time.Second

// Bounds on a header, so that a hostile one costs little to reject.
const (
	maxHeaderLen = 8192
	maxItems     = 32
	maxTDigits   = 12
)

// Internal causes of a rejected header, kept in chat.Error.Err for logs.
// They never include the header itself: a signature is a credential.
var (
	errTooLong     = errors.New("signature: header longer than 8192 bytes")
	errTooMany     = errors.New("signature: more than 32 items")
	errNotKeyValue = errors.New("signature: item is not key=value")
	errDuplicateT  = errors.New("signature: more than one t")
	errBadT        = errors.New("signature: t is not 1 to 12 decimal digits")
	errNoT         = errors.New("signature: no t")
	errNoV1        = errors.New("signature: no v1")
	errNoSecret    = errors.New("signature: empty signing secret")
)

// Sign returns the v1 signature of body at time t under secret: the
// lowercase hex HMAC-SHA256 of "<t>.<body>", t in decimal without leading
// zeros.
func Sign(secret []byte, t int64, body []byte) string {
	var ts [24]byte
	return SignText(secret, strconv.AppendInt(ts[:0], t, 10), body)
}

// SignText is Sign over the timestamp text t exactly as it will be sent in
// the header's t= item: the HMAC covers those bytes, not their value.
func SignText(secret []byte, t []byte, body []byte) string {
	var sum [sha256.Size]byte
	return hex.EncodeToString(mac(secret, t, body, sum[:0]))
}

// mac appends the raw HMAC-SHA256 of "<t>.<body>" to dst.
func mac(secret []byte, t []byte, body []byte, dst []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(t)
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(dst)
}

// Format returns a header value "t=<t>,v1=<sig>,v1=<sig>..." carrying sigs
// in the order given.
func Format(t int64, sigs ...string) string {
	var b strings.Builder
	n := len("t=") + 20
	for _, s := range sigs {
		n += len(",v1=") + len(s)
	}
	b.Grow(n)
	b.WriteString("t=")
	b.WriteString(strconv.FormatInt(t, 10))
	for _, s := range sigs {
		b.WriteString(",v1=")
		b.WriteString(s)
	}
	return b.String()
}

// FromRequest returns the signature header of h with all its values joined
// by commas, undoing the API Gateway adapter's split of a header on commas
// (see the package documentation). It returns "" when the header is absent.
func FromRequest(h http.Header) string {
	return strings.Join(h.Values(Header), ",")
}

// Parsed is a parsed signature header.
type Parsed struct {
	// T is the signed timestamp, in unix seconds: the value of TText.
	T int64
	// TText is the t item's value exactly as sent. The signature covers
	// these bytes ("<TText>.<body>"), as Stripe's libraries compute it.
	TText string
	// V1 holds the v1 values in header order. A value that is not 64
	// lowercase hex characters is kept but never matches.
	V1 []string
}

// Parse parses a signature header. Items are separated by commas and
// trimmed of spaces and tabs; empty items are skipped; each other item is
// key=value with a non-empty key (split at the first '='). Exactly one t,
// of 1 to 12 ASCII decimal digits (leading zeros allowed: they are signed
// with the rest; no sign, no space, no fraction), and at least one v1 are
// required; other keys are ignored. At most 32 items in all, so at most 31
// v1 entries.
//
// Parse returns a *chat.Error with code chat.EMissingSignature when header
// is empty or blank, and chat.EInvalidSignatureHeader when it breaks the
// rules above, is longer than 8192 bytes or has more than 32 items.
func Parse(header string) (Parsed, error) {
	if trim(header) == "" {
		return Parsed{}, missing()
	}
	if len(header) > maxHeaderLen {
		return Parsed{}, invalidHeader(errTooLong)
	}
	var (
		p     Parsed
		haveT bool
		items int
	)
	for rest := header; rest != ""; {
		var item string
		item, rest, _ = strings.Cut(rest, ",")
		item = trim(item)
		if item == "" {
			continue
		}
		if items++; items > maxItems {
			return Parsed{}, invalidHeader(errTooMany)
		}
		key, value, ok := strings.Cut(item, "=")
		if !ok || key == "" {
			return Parsed{}, invalidHeader(errNotKeyValue)
		}
		switch key {
		case "t":
			if haveT {
				return Parsed{}, invalidHeader(errDuplicateT)
			}
			t, ok := parseT(value)
			if !ok {
				return Parsed{}, invalidHeader(errBadT)
			}
			p.T, p.TText, haveT = t, value, true
		case "v1":
			p.V1 = append(p.V1, value)
		}
	}
	if !haveT {
		return Parsed{}, invalidHeader(errNoT)
	}
	if len(p.V1) == 0 {
		return Parsed{}, invalidHeader(errNoV1)
	}
	return p, nil
}

// parseT accepts 1 to 12 decimal digits and nothing else: no sign, no
// spaces. Twelve digits (leading zeros count) reach the year 33658, and
// cannot overflow.
func parseT(s string) (int64, bool) {
	if s == "" || len(s) > maxTDigits {
		return 0, false
	}
	var t int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		t = t*10 + int64(c-'0')
	}
	return t, true
}

func trim(s string) string { return strings.Trim(s, " \t") }

// Verify checks a signature header against body and secret at time now. It
// returns the v1 value that matched, which the caller keeps to refuse a
// replay. Every v1 is compared in constant time with the one expected
// signature, the HMAC over t as sent (TText); freshness is judged on t's
// value in whole seconds, and one exactly Tolerance away is accepted.
//
// Verify returns a *chat.Error with code chat.EMissingSignature for an empty
// header, chat.EInvalidSignatureHeader for one Parse rejects,
// chat.ESignatureExpired when |now - t| > Tolerance, and
// chat.EInvalidSignature when no v1 matches. An empty secret is a server
// misconfiguration: a fresh, well-formed header is then refused with an
// internal error (chat.EInternal) rather than checked against an HMAC that
// anyone can compute.
func Verify(header string, secret []byte, body []byte, now time.Time) (matched string, err error) {
	p, err := Parse(header)
	if err != nil {
		return "", err
	}
	if d := now.Unix() - p.T; d > int64(Tolerance/time.Second) || d < -int64(Tolerance/time.Second) {
		return "", chat.Errorf(chat.ESignatureExpired, "The signature timestamp is outside the allowed tolerance.")
	}
	if len(secret) == 0 {
		return "", chat.Internal(errNoSecret)
	}
	var sum [sha256.Size]byte
	var want [2 * sha256.Size]byte
	hex.Encode(want[:], mac(secret, []byte(p.TText), body, sum[:0]))
	for _, v := range p.V1 {
		// hmac.Equal returns early only on a length mismatch, and the
		// length of a signature is public.
		if hmac.Equal([]byte(v), want[:]) {
			return v, nil
		}
	}
	return "", chat.Errorf(chat.EInvalidSignature, "The signature does not match the request.")
}

func missing() error {
	return chat.Errorf(chat.EMissingSignature, "The %s header is required.", Header)
}

func invalidHeader(cause error) error {
	return &chat.Error{
		Code:    chat.EInvalidSignatureHeader,
		Message: "The " + Header + " header is malformed.",
		Err:     cause,
	}
}
