package inbound

import (
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/signature"
)

// rotating reports whether wh's previous secrets still work at now: a
// rotation keeps them valid until PreviousExpiresAt, checked here rather
// than left to any TTL.
func rotating(wh chat.InboundWebhook, now time.Time) bool {
	return !wh.PreviousExpiresAt.IsZero() && now.Before(wh.PreviousExpiresAt)
}

// staticSecretMatches compares secret with the webhook's secret, and during
// a rotation with the previous one, each in constant time. Both are
// compared whatever the first result, so timing says nothing of which one
// matched.
func staticSecretMatches(secret string, wh chat.InboundWebhook, now time.Time) bool {
	hash := chat.HashToken(secret)
	current := chat.HashesEqual(hash, wh.SecretHash)
	previous := false
	if rotating(wh, now) && wh.PreviousSecretHash != "" {
		previous = chat.HashesEqual(hash, wh.PreviousSecretHash)
	}
	return current || previous
}

// verifySignature verifies header with the webhook's signing secret and,
// during a rotation when that finds no match, with the previous one: a v1
// made with either is accepted. It returns the v1 that matched; errors as
// signature.Verify.
func verifySignature(header string, wh chat.InboundWebhook, body []byte, now time.Time) (string, error) {
	matched, err := signature.Verify(header, []byte(wh.SigningSecret), body, now)
	if chat.IsCode(err, chat.EInvalidSignature) && rotating(wh, now) && wh.PreviousSigningSecret != "" {
		return signature.Verify(header, []byte(wh.PreviousSigningSecret), body, now)
	}
	return matched, err
}
