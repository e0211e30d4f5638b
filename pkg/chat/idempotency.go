package chat

// The Idempotency-Key rules that webhook posts, webhook edits and members'
// posts share (contract section 4 step 6): which keys are valid, how a key is stored
// (its hash), and what makes two requests "the same request" for a key
// (their fingerprint).

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// MaxIdempotencyKeyLen is the longest Idempotency-Key accepted, in bytes (characters:
// a valid key is printable ASCII).
const MaxIdempotencyKeyLen = 255

// IdempotencyRetention is how long a key's result is kept and replayed.
const IdempotencyRetention = 24 * time.Hour

// ValidIdempotencyKey reports whether k is an acceptable Idempotency-Key: 1 to
// MaxIdempotencyKeyLen printable ASCII characters (commas included).
func ValidIdempotencyKey(k string) bool {
	if len(k) < 1 || len(k) > MaxIdempotencyKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// HashIdempotencyKey is the hex SHA-256 of k, under which a key is stored.
func HashIdempotencyKey(k string) string {
	sum := sha256.Sum256([]byte(k))
	return hex.EncodeToString(sum[:])
}

// IdempotencyFingerprint identifies a posted message for its key: the channel, the
// content and skip_translation. A key sent again with another fingerprint
// is a reused key.
func IdempotencyFingerprint(channelID, content string, skipTranslation bool, attachments ...string) string {
	if len(attachments) == 0 {
		// The fingerprint of a post without attachments is what it was
		// before posts had them, so that live records still match.
		return fingerprint(channelID, content, skipTranslation)
	}
	return fingerprint(channelID, content, skipTranslation, attachments)
}

// ChangeFingerprint identifies an inbound webhook's edit or deletion of a
// message for its key (the key is the webhook's, which its posts share):
// the method, the message and the body (the channel named, or the webhook's
// own, and an edit's content; "" for a deletion). It never equals a post's.
func ChangeFingerprint(method, messageID, channelID, content string) string {
	return fingerprint(method, messageID, channelID, content)
}

// AttachmentsChangeFingerprint is ChangeFingerprint of an edit that sets
// the message's attachments: its content (nil when the edit keeps the
// stored one) and attachments (each upload id and alt text, in order) are
// part of the request. It never equals ChangeFingerprint's (one more part).
func AttachmentsChangeFingerprint(method, messageID, channelID string, content *string, attachments []string) string {
	if attachments == nil {
		attachments = []string{}
	}
	return fingerprint(method, messageID, channelID, content, attachments)
}

// fingerprint is the hex SHA-256 of parts as a JSON array.
func fingerprint(parts ...any) string {
	b, _ := json.Marshal(parts)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
