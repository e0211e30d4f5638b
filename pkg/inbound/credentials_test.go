package inbound

import (
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/signature"
)

// TestCredentialsDuringRotation: the new and the previous credential both
// work until PreviousExpiresAt, only the new one from then on, and an
// empty previous never matches.
func TestCredentialsDuringRotation(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	rotated := chat.InboundWebhook{SecretHash: chat.HashToken("whsec_new"), SigningSecret: "whsig_new",
		PreviousSecretHash: chat.HashToken("whsec_old"), PreviousSigningSecret: "whsig_old", PreviousExpiresAt: now.Add(time.Hour)}
	never := chat.InboundWebhook{SecretHash: chat.HashToken("whsec_new"), SigningSecret: "whsig_new"}
	body := []byte(`{"content":"hi"}`)
	sig := func(secret string, at time.Time) string {
		return signature.Format(at.Unix(), signature.Sign([]byte(secret), at.Unix(), body))
	}
	for _, tc := range []struct {
		name       string
		wh         chat.InboundWebhook
		at         time.Time
		secret     string
		staticOK   bool
		signingKey string
		sigCode    string
	}{
		{"new within", rotated, now, "whsec_new", true, "whsig_new", ""},
		{"old within", rotated, now, "whsec_old", true, "whsig_old", ""},
		{"old a second before expiry", rotated, now.Add(time.Hour - time.Second), "whsec_old", true, "whsig_old", ""},
		{"old at expiry", rotated, now.Add(time.Hour), "whsec_old", false, "whsig_old", chat.EInvalidSignature},
		{"new after", rotated, now.Add(2 * time.Hour), "whsec_new", true, "whsig_new", ""},
		{"wrong within", rotated, now, "whsec_other", false, "whsig_other", chat.EInvalidSignature},
		{"no rotation, old", never, now, "whsec_old", false, "whsig_old", chat.EInvalidSignature},
		{"no rotation, empty", never, now, "", false, "", chat.EInvalidSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := staticSecretMatches(tc.secret, tc.wh, tc.at); got != tc.staticOK {
				t.Fatalf("static %q: %v, want %v", tc.secret, got, tc.staticOK)
			}
			_, err := verifySignature(sig(tc.signingKey, tc.at), tc.wh, body, tc.at)
			if got := chat.ErrorCode(err); got != tc.sigCode {
				t.Fatalf("signature with %q: %q, want %q", tc.signingKey, got, tc.sigCode)
			}
		})
	}
	// Both v1 entries of a delivery-style header: one match is enough.
	h := signature.Format(now.Unix(), signature.Sign([]byte("whsig_zzz"), now.Unix(), body), signature.Sign([]byte("whsig_old"), now.Unix(), body))
	if _, err := verifySignature(h, rotated, body, now); err != nil {
		t.Fatalf("two v1, the second the previous secret's: %v", err)
	}
}
