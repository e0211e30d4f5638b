package signature_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/signature"
)

var (
	secret    = []byte("whsec_test_secret")
	oldSecret = []byte("old-secret")
	body      = []byte(`{"content":"hello"}`)
	ts        = int64(1767225600) // 2026-01-01T00:00:00Z
	now       = time.Unix(ts, 0)
)

// Computed outside Go: printf '%s' '1767225600.{"content":"hello"}' | openssl dgst -sha256 -hmac whsec_test_secret
const knownAnswer = "39681d0bbbcf7a0403672b5a4ebed72e0826439c7e0c05177631292ed701dd10"

// wantCode fails unless err is a *chat.Error with code and a client-safe message.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var e *chat.Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v (%T), want *chat.Error with code %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("got code %s (%v), want %s", e.Code, err, code)
	}
	if e.Message == "" || strings.Contains(e.Message, string(secret)) {
		t.Fatalf("got message %q, want a client-safe sentence", e.Message)
	}
}

func TestSignKnownAnswer(t *testing.T) {
	got := signature.Sign(secret, ts, body)
	if got != knownAnswer {
		t.Fatalf("Sign = %s, want %s", got, knownAnswer)
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(strconv.FormatInt(ts, 10) + "." + string(body)))
	if want := hex.EncodeToString(m.Sum(nil)); got != want {
		t.Fatalf("Sign = %s, want crypto/hmac %s", got, want)
	}
}

func TestSignCrossCheck(t *testing.T) {
	for _, tc := range []struct {
		secret []byte
		t      int64
		body   []byte
	}{
		{[]byte("k"), 0, nil},
		{[]byte("k"), 1, []byte{}},
		{[]byte("a longer secret with spaces"), 999999999999, []byte("x")},
		{bytes.Repeat([]byte{0xff}, 100), 1767225600, bytes.Repeat([]byte("é"), 5000)},
		{[]byte("k"), -5, []byte("negative t is signed as written")},
	} {
		m := hmac.New(sha256.New, tc.secret)
		fmt.Fprintf(m, "%d.%s", tc.t, tc.body)
		want := hex.EncodeToString(m.Sum(nil))
		if got := signature.Sign(tc.secret, tc.t, tc.body); got != want {
			t.Errorf("Sign(%q, %d, %d bytes) = %s, want %s", tc.secret, tc.t, len(tc.body), got, want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		t    int64
		sigs []string
		want string
	}{
		{1, nil, "t=1"},
		{1767225600, []string{"ab"}, "t=1767225600,v1=ab"},
		{0, []string{"a", "b", ""}, "t=0,v1=a,v1=b,v1="},
	} {
		if got := signature.Format(tc.t, tc.sigs...); got != tc.want {
			t.Errorf("Format(%d, %q) = %q, want %q", tc.t, tc.sigs, got, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	h64 := strings.Repeat("a", 64)
	for _, tc := range []struct {
		name   string
		header string
		want   signature.Parsed
	}{
		{"canonical", "t=1767225600,v1=" + h64, signature.Parsed{T: 1767225600, V1: []string{h64}}},
		{"two v1 in order", "t=5,v1=b,v1=a", signature.Parsed{T: 5, V1: []string{"b", "a"}}},
		{"v1 before t", "v1=a,t=5", signature.Parsed{T: 5, V1: []string{"a"}}},
		{"spaces and tabs", " \tt=5 , v1=a\t,\tv1=b ", signature.Parsed{T: 5, V1: []string{"a", "b"}}},
		{"trailing comma", "t=5,v1=a,", signature.Parsed{T: 5, V1: []string{"a"}}},
		{"empty items", ",,t=5,, ,v1=a,,", signature.Parsed{T: 5, V1: []string{"a"}}},
		{"unknown keys ignored", "t=5,v0=zz,v2=yy,foo=,v1=a", signature.Parsed{T: 5, V1: []string{"a"}}},
		{"v1 with '=' in value", "t=5,v1=a=b", signature.Parsed{T: 5, V1: []string{"a=b"}}},
		{"empty v1 kept", "t=5,v1=", signature.Parsed{T: 5, V1: []string{""}}},
		{"uppercase v1 kept", "t=5,v1=ABC", signature.Parsed{T: 5, V1: []string{"ABC"}}},
		{"t zero", "t=0,v1=a", signature.Parsed{T: 0, V1: []string{"a"}}},
		{"t leading zeros", "t=000000000007,v1=a", signature.Parsed{T: 7, V1: []string{"a"}}},
		{"t 12 digits", "t=999999999999,v1=a", signature.Parsed{T: 999999999999, V1: []string{"a"}}},
		{"32 items", "t=5" + strings.Repeat(",v1=a", 31), signature.Parsed{T: 5, V1: slices.Repeat([]string{"a"}, 31)}},
		{"8192 bytes", "t=5,v1=" + strings.Repeat("a", 8192-7), signature.Parsed{T: 5, V1: []string{strings.Repeat("a", 8192-7)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := signature.Parse(tc.header)
			if err != nil {
				t.Fatalf("Parse(%q): got error %v, want %+v", tc.header, err, tc.want)
			}
			if got.T != tc.want.T || !slices.Equal(got.V1, tc.want.V1) {
				t.Fatalf("Parse(%q) = %+v, want %+v", tc.header, got, tc.want)
			}
			if want := strconv.FormatInt(got.T, 10); strings.TrimLeft(got.TText, "0") != strings.TrimLeft(want, "0") || got.TText == "" {
				t.Fatalf("Parse(%q): TText %q, want the digits of %s as sent", tc.header, got.TText, want)
			}
		})
	}
}

// The HMAC covers t exactly as sent (as Stripe's libraries compute it); its
// numeric value only decides freshness.
func TestVerifySignsTAsSent(t *testing.T) {
	tsText := strconv.FormatInt(ts, 10)
	padded := "00" + tsText
	overPadded := signature.SignText(secret, []byte(padded), body)
	overValue := signature.Sign(secret, ts, body)
	twelve := strings.Repeat("0", 12-len(tsText)) + tsText
	overTwelve := signature.SignText(secret, []byte(twelve), body)
	for _, tc := range []struct {
		name, header, code, matched string
		now                         time.Time
	}{
		{name: "leading zeros, signed as sent", header: "t=" + padded + ",v1=" + overPadded, matched: overPadded},
		{name: "leading zeros, signed over the value", header: "t=" + padded + ",v1=" + overValue, code: chat.EInvalidSignature},
		{name: "no zeros, signed over the padded text", header: "t=" + tsText + ",v1=" + overPadded, code: chat.EInvalidSignature},
		{name: "12 characters with zeros", header: "t=" + twelve + ",v1=" + overTwelve, matched: overTwelve},
		{name: "13 characters with zeros", header: "t=0" + twelve + ",v1=" + signature.SignText(secret, []byte("0"+twelve), body), code: chat.EInvalidSignatureHeader},
		{name: "padded and stale: freshness on the value", header: "t=" + padded + ",v1=" + overPadded, now: now.Add(301 * time.Second), code: chat.ESignatureExpired},
		{name: "padded at the edge", header: "t=" + padded + ",v1=" + overPadded, now: now.Add(300 * time.Second), matched: overPadded},
		{name: "plus sign", header: "t=+" + tsText + ",v1=" + signature.SignText(secret, []byte("+"+tsText), body), code: chat.EInvalidSignatureHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := now
			if !tc.now.IsZero() {
				at = tc.now
			}
			matched, err := signature.Verify(tc.header, secret, body, at)
			if tc.code != "" {
				if err == nil {
					t.Fatalf("Verify(%q): got match %q, want error %s", tc.header, matched, tc.code)
				}
				wantCode(t, err, tc.code)
				return
			}
			if err != nil || matched != tc.matched {
				t.Fatalf("Verify(%q): got %q, %v, want match %s", tc.header, matched, err, tc.matched)
			}
		})
	}
	if overPadded == overValue {
		t.Fatalf("the HMAC over %q equals the one over %q", padded, tsText)
	}
}

// A header carries at most 32 items, so at most 31 v1 entries beside its t:
// a sender rotating secrets needs two.
func TestVerifyV1Cap(t *testing.T) {
	good := signature.Sign(secret, ts, body)
	h64 := strings.Repeat("0", 64)
	last := signature.Format(ts, append(slices.Repeat([]string{h64}, 30), good)...)
	if m, err := signature.Verify(last, secret, body, now); err != nil || m != good {
		t.Fatalf("31 v1 entries, the last matching: got %q, %v, want a match", m, err)
	}
	over := signature.Format(ts, append(slices.Repeat([]string{h64}, 31), good)...)
	_, err := signature.Verify(over, secret, body, now)
	wantCode(t, err, chat.EInvalidSignatureHeader)
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header string
		code   string
	}{
		{"empty", "", chat.EMissingSignature},
		{"blank", " \t ", chat.EMissingSignature},
		{"only commas", ",,,", chat.EInvalidSignatureHeader},
		{"no t", "v1=a", chat.EInvalidSignatureHeader},
		{"no v1", "t=5", chat.EInvalidSignatureHeader},
		{"only v0", "t=5,v0=a", chat.EInvalidSignatureHeader},
		{"two t", "t=5,t=5,v1=a", chat.EInvalidSignatureHeader},
		{"empty t", "t=,v1=a", chat.EInvalidSignatureHeader},
		{"signed t", "t=+5,v1=a", chat.EInvalidSignatureHeader},
		{"negative t", "t=-5,v1=a", chat.EInvalidSignatureHeader},
		{"t with space", "t=5 6,v1=a", chat.EInvalidSignatureHeader},
		{"t hex", "t=0x10,v1=a", chat.EInvalidSignatureHeader},
		{"t fraction", "t=5.0,v1=a", chat.EInvalidSignatureHeader},
		{"t 13 digits", "t=1000000000000,v1=a", chat.EInvalidSignatureHeader},
		{"t overflow", "t=99999999999999999999999,v1=a", chat.EInvalidSignatureHeader},
		{"t unicode digit", "t=١٢,v1=a", chat.EInvalidSignatureHeader},
		{"item without =", "t=5,v1=a,garbage", chat.EInvalidSignatureHeader},
		{"empty key", "t=5,=a,v1=a", chat.EInvalidSignatureHeader},
		{"semicolons", "t=5;v1=a", chat.EInvalidSignatureHeader},
		{"bare hex", knownAnswer, chat.EInvalidSignatureHeader},
		{"sha256= style", "sha256=" + knownAnswer, chat.EInvalidSignatureHeader},
		{"space around =", "t =5,v1=a", chat.EInvalidSignatureHeader},
		{"33 items", "t=5" + strings.Repeat(",v1=a", 32), chat.EInvalidSignatureHeader},
		{"8193 bytes", "t=5,v1=" + strings.Repeat("a", 8192-6), chat.EInvalidSignatureHeader},
		{"NUL", "\x00", chat.EInvalidSignatureHeader},
		{"newline", "t=5\nv1=a", chat.EInvalidSignatureHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := signature.Parse(tc.header)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want error %s", tc.header, p, tc.code)
			}
			wantCode(t, err, tc.code)
		})
	}
}

func TestVerify(t *testing.T) {
	good := signature.Sign(secret, ts, body)
	old := signature.Sign(oldSecret, ts, body)
	h64 := strings.Repeat("0", 64)
	for _, tc := range []struct {
		name    string
		header  string
		secret  []byte
		body    []byte
		now     time.Time
		code    string // "" for success
		matched string
	}{
		{name: "valid", header: signature.Format(ts, good), matched: good},
		{name: "known answer", header: "t=1767225600,v1=" + knownAnswer, matched: knownAnswer},
		{name: "rotation: second v1 matches", header: signature.Format(ts, old, good), matched: good},
		{name: "rotation: first v1 matches", header: signature.Format(ts, good, old), matched: good},
		{name: "old secret only, verified under old", header: signature.Format(ts, old), secret: oldSecret, matched: old},
		{name: "garbage v1 beside a match", header: signature.Format(ts, "zz", "", good), matched: good},
		{name: "v0 ignored", header: "t=1767225600,v0=" + good + ",v1=" + good, matched: good},
		{name: "spaces as after the adapter join", header: "t=1767225600, v1=" + good, matched: good},
		{name: "300 s stale accepted", header: signature.Format(ts, good), now: now.Add(300 * time.Second), matched: good},
		{name: "300.9 s stale accepted (whole seconds)", header: signature.Format(ts, good), now: now.Add(300*time.Second + 900*time.Millisecond), matched: good},
		{name: "300 s future accepted", header: signature.Format(ts, good), now: now.Add(-300 * time.Second), matched: good},
		{name: "301 s stale", header: signature.Format(ts, good), now: now.Add(301 * time.Second), code: chat.ESignatureExpired},
		{name: "301 s future", header: signature.Format(ts, good), now: now.Add(-301 * time.Second), code: chat.ESignatureExpired},
		{name: "a day stale", header: signature.Format(ts, good), now: now.Add(24 * time.Hour), code: chat.ESignatureExpired},
		{name: "t zero", header: signature.Format(0, good), code: chat.ESignatureExpired},
		{name: "t far future", header: signature.Format(999999999999, good), code: chat.ESignatureExpired},
		{name: "expired judged before match", header: signature.Format(ts, h64), now: now.Add(time.Hour), code: chat.ESignatureExpired},
		{name: "uppercase hex does not match", header: signature.Format(ts, strings.ToUpper(good)), code: chat.EInvalidSignature},
		{name: "wrong secret", header: signature.Format(ts, good), secret: []byte("another secret"), code: chat.EInvalidSignature},
		{name: "tampered body", header: signature.Format(ts, good), body: []byte(`{"content":"hellO"}`), code: chat.EInvalidSignature},
		{name: "signature of another t", header: signature.Format(ts+1, good), code: chat.EInvalidSignature},
		{name: "truncated v1", header: signature.Format(ts, good[:63]), code: chat.EInvalidSignature},
		{name: "v1 with a suffix", header: signature.Format(ts, good+"0"), code: chat.EInvalidSignature},
		{name: "matching sig only under v0", header: "t=1767225600,v0=" + good + ",v1=" + h64, code: chat.EInvalidSignature},
		{name: "raw base64 instead of hex", header: "t=1767225600,v1=OWgdC7vPegQDZytaTr7XLggmQ5x+DAUXdjEpLtcB3RA=", code: chat.EInvalidSignature},
		{name: "missing header", header: "", code: chat.EMissingSignature},
		{name: "garbage header", header: "hello", code: chat.EInvalidSignatureHeader},
		{name: "stale garbage is still garbage", header: "t=1,v0=a", code: chat.EInvalidSignatureHeader},
		{name: "empty secret", header: signature.Format(ts, signature.Sign(nil, ts, body)), secret: []byte{}, code: chat.EInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, b, at := secret, body, now
			if tc.secret != nil {
				key = tc.secret
			}
			if tc.body != nil {
				b = tc.body
			}
			if !tc.now.IsZero() {
				at = tc.now
			}
			matched, err := signature.Verify(tc.header, key, b, at)
			if tc.code != "" {
				if err == nil {
					t.Fatalf("Verify(%q): got match %q, want error %s", tc.header, matched, tc.code)
				}
				wantCode(t, err, tc.code)
				if matched != "" {
					t.Fatalf("Verify(%q): got match %q with error, want \"\"", tc.header, matched)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify(%q): got error %v, want match %s", tc.header, err, tc.matched)
			}
			if matched != tc.matched {
				t.Fatalf("Verify(%q): got match %s, want %s", tc.header, matched, tc.matched)
			}
		})
	}
}

// The API Gateway V2 adapter splits header values on commas and trims
// spaces; FromRequest must undo that.
func TestFromRequest(t *testing.T) {
	good := signature.Sign(secret, ts, body)
	old := signature.Sign(oldSecret, ts, body)
	for _, tc := range []struct {
		name   string
		values []string
		want   string
	}{
		{"absent", nil, ""},
		{"one value", []string{signature.Format(ts, good)}, signature.Format(ts, good)},
		{"split by the adapter", []string{"t=1767225600", "v1=" + old, "v1=" + good}, signature.Format(ts, old, good)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.values {
				h.Add("x-service-signature", v) // canonicalised like any header
			}
			got := signature.FromRequest(h)
			if got != tc.want {
				t.Fatalf("FromRequest = %q, want %q", got, tc.want)
			}
			if len(tc.values) > 1 {
				if h.Get(signature.Header) == got {
					t.Fatalf("Header.Get already sees the whole value; the test does not model the adapter")
				}
				if m, err := signature.Verify(got, secret, body, now); err != nil || m != good {
					t.Fatalf("Verify(FromRequest) = %q, %v, want %s, nil", m, err, good)
				}
			}
		})
	}
	if _, err := signature.Verify(signature.FromRequest(http.Header{}), secret, body, now); !chat.IsCode(err, chat.EMissingSignature) {
		t.Fatalf("Verify of an absent header: got %v, want %s", err, chat.EMissingSignature)
	}
}

func ExampleVerify() {
	secret := []byte("whsec_test_secret")
	body := []byte(`{"content":"hello"}`)
	now := time.Unix(1767225600, 0)

	header := signature.Format(now.Unix(), signature.Sign(secret, now.Unix(), body))
	matched, err := signature.Verify(header, secret, body, now.Add(10*time.Second))
	fmt.Println(matched, err)

	_, err = signature.Verify(header, secret, body, now.Add(time.Hour))
	fmt.Println(chat.ErrorCode(err))
	// Output:
	// 39681d0bbbcf7a0403672b5a4ebed72e0826439c7e0c05177631292ed701dd10 <nil>
	// signature_expired
}

func BenchmarkVerify(b *testing.B) {
	body := bytes.Repeat([]byte("a"), 1024)
	header := signature.Format(ts, signature.Sign(oldSecret, ts, body), signature.Sign(secret, ts, body))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := signature.Verify(header, secret, body, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	header := signature.Format(ts, strings.Repeat("a", 64), strings.Repeat("b", 64))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := signature.Parse(header); err != nil {
			b.Fatal(err)
		}
	}
}
