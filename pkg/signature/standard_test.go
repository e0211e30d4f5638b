package signature_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/signature"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// TestStandardSignatureVerifiesWithTheOfficialLibrary: the official
// Standard Webhooks Go library, given StandardSecret of either secret,
// verifies a header carrying one signature per secret (a rotation).
func TestStandardSignatureVerifiesWithTheOfficialLibrary(t *testing.T) {
	cur, prev := []byte("whsig_current_secret"), []byte("whsig_previous_secret")
	id, at := "01JDA5Q4V3B8000000000000DL", time.Now()
	h := http.Header{}
	h.Set(signature.StandardHeaderID, id)
	h.Set(signature.StandardHeaderTimestamp, itoa(at.Unix()))
	h.Set(signature.StandardHeaderSignature, signature.FormatStandard(signature.SignStandard(cur, id, at.Unix(), body), signature.SignStandard(prev, id, at.Unix(), body)))
	for _, s := range [][]byte{cur, prev} {
		wh, err := standardwebhooks.NewWebhook(signature.StandardSecret(s))
		if err != nil {
			t.Fatalf("NewWebhook(%q): %v", signature.StandardSecret(s), err)
		}
		if err := wh.Verify(body, h); err != nil {
			t.Errorf("the library refused a delivery signed with %q: %v", s, err)
		}
		if err := wh.Verify([]byte(`{"content":"other"}`), h); err == nil {
			t.Errorf("the library accepted another body with %q, want a refusal", s)
		}
	}
	other, _ := standardwebhooks.NewWebhook(signature.StandardSecret([]byte("whsig_someone_else")))
	if err := other.Verify(body, h); err == nil {
		t.Error("the library accepted the delivery with another secret, want a refusal")
	}
	// And the library's own signature verifies with VerifyStandard.
	wh, _ := standardwebhooks.NewWebhookRaw(cur)
	sig, _ := wh.Sign(id, at, body)
	if err := signature.VerifyStandard(id, itoa(at.Unix()), sig, [][]byte{prev, cur}, body, at); err != nil {
		t.Errorf("VerifyStandard refused the library's signature: %v", err)
	}
}

func TestStandardSecretRoundTrip(t *testing.T) {
	for _, s := range []string{"whsig_abc", "x", "\x00\xff binary"} {
		got, err := signature.ParseStandardSecret(signature.StandardSecret([]byte(s)))
		if err != nil || string(got) != s {
			t.Errorf("ParseStandardSecret(StandardSecret(%q)) = %q, %v, want %q", s, got, err, s)
		}
	}
	for _, bad := range []string{"", "whsig_abc", "whsec_", "whsec_!!!"} {
		if _, err := signature.ParseStandardSecret(bad); err == nil {
			t.Errorf("ParseStandardSecret(%q): got no error, want one", bad)
		}
	}
}

func TestVerifyStandard(t *testing.T) {
	id, ts := "D1", now.Unix()
	good := signature.SignStandard(secret, id, ts, body)
	for _, c := range []struct {
		name, id, ts, sig string
		at                time.Time
		code              string
	}{
		{"good", id, itoa(ts), good, now, ""},
		{"among others", id, itoa(ts), "v2,abc v1,AAAA " + good, now, ""},
		{"edge of the window", id, itoa(ts), good, now.Add(signature.Tolerance), ""},
		{"past the window", id, itoa(ts), good, now.Add(signature.Tolerance + time.Second), chat.ESignatureExpired},
		{"other id", "D2", itoa(ts), good, now, chat.EInvalidSignature},
		{"v2 only", id, itoa(ts), "v2," + good[3:], now, chat.EInvalidSignature},
		{"no id", "", itoa(ts), good, now, chat.EMissingSignature},
		{"no signature", id, itoa(ts), " ", now, chat.EMissingSignature},
		{"bad timestamp", id, "-1", good, now, chat.EInvalidSignatureHeader},
	} {
		err := signature.VerifyStandard(c.id, c.ts, c.sig, [][]byte{[]byte("other"), secret}, body, c.at)
		if c.code == "" {
			if err != nil {
				t.Errorf("%s: got %v, want nil", c.name, err)
			}
			continue
		}
		if chat.ErrorCode(err) != c.code {
			t.Errorf("%s: got %v, want %s", c.name, err, c.code)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
