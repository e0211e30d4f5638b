package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
)

// Standard Webhooks (standardwebhooks.com) headers, sent beside Header on
// every delivery (contract section 14).
const (
	StandardHeaderID        = "webhook-id"
	StandardHeaderTimestamp = "webhook-timestamp"
	StandardHeaderSignature = "webhook-signature"
	// StandardSecretPrefix starts a secret in the Standard Webhooks form.
	StandardSecretPrefix = "whsec_"
)

// StandardSecret returns secret in the form Standard Webhooks libraries
// take: "whsec_" and the standard base64 of its bytes, so that a library
// keys its HMAC with exactly the bytes this service signs with.
func StandardSecret(secret []byte) string {
	return StandardSecretPrefix + base64.StdEncoding.EncodeToString(secret)
}

// ParseStandardSecret returns the key bytes of a "whsec_<base64>" secret.
func ParseStandardSecret(s string) ([]byte, error) {
	rest, ok := strings.CutPrefix(s, StandardSecretPrefix)
	if !ok {
		return nil, errors.New("signature: standard secret without the whsec_ prefix")
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(b) == 0 {
		return nil, errors.New("signature: standard secret is not base64")
	}
	return b, nil
}

// SignStandard returns one webhook-signature entry: "v1," and the base64
// HMAC-SHA256 of "<id>.<t>.<body>" under secret.
func SignStandard(secret []byte, id string, t int64, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(standardMAC(secret, id, strconv.FormatInt(t, 10), body))
}

func standardMAC(secret []byte, id, t string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(t))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// FormatStandard joins webhook-signature entries with spaces, as the
// specification separates them.
func FormatStandard(sigs ...string) string { return strings.Join(sigs, " ") }

// VerifyStandard checks the Standard Webhooks headers of a request (id,
// timestamp and signature header values) against body and any of secrets
// at time now, as the official libraries do: the timestamp within
// Tolerance, one "v1,<base64>" entry matching in constant time.
//
// Errors, as Verify's: chat.EMissingSignature when a header is empty,
// chat.EInvalidSignatureHeader for a timestamp that is not decimal digits,
// chat.ESignatureExpired, chat.EInvalidSignature when nothing matches.
func VerifyStandard(id, ts, sig string, secrets [][]byte, body []byte, now time.Time) error {
	if id == "" || ts == "" || strings.TrimSpace(sig) == "" {
		return chat.Errorf(chat.EMissingSignature, "The %s, %s and %s headers are required.", StandardHeaderID, StandardHeaderTimestamp, StandardHeaderSignature)
	}
	t, ok := parseT(ts)
	if !ok {
		return &chat.Error{Code: chat.EInvalidSignatureHeader, Message: "The " + StandardHeaderTimestamp + " header is malformed.", Err: errBadT}
	}
	if d := now.Unix() - t; d > int64(Tolerance/time.Second) || d < -int64(Tolerance/time.Second) {
		return chat.Errorf(chat.ESignatureExpired, "The signature timestamp is outside the allowed tolerance.")
	}
	for _, s := range secrets {
		if len(s) == 0 {
			continue
		}
		want := []byte(base64.StdEncoding.EncodeToString(standardMAC(s, id, ts, body)))
		for _, entry := range strings.Fields(sig) {
			version, value, ok := strings.Cut(entry, ",")
			if ok && version == "v1" && hmac.Equal([]byte(value), want) {
				return nil
			}
		}
	}
	return chat.Errorf(chat.EInvalidSignature, "The signature does not match the request.")
}
