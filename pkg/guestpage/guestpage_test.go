package guestpage_test

import (
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/guestpage"
	"github.com/chatbridge/chat/pkg/rooms"
)

// TestGuestPageLoadsOnlyWhatItServes: every /assets file the page links
// (its icon included, so that no browser asks for /favicon.ico) is served,
// and the nickname field takes as many characters as the join API.
func TestGuestPageLoadsOnlyWhatItServes(t *testing.T) {
	h := guestpage.GuestPageHandler("", "")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/rooms/01JD9N113GQYDPWDARF68MKWR7", nil))
	if rec.Code != 200 {
		t.Fatalf("page: got %d, want 200", rec.Code)
	}
	page := rec.Body.String()
	if !regexp.MustCompile(`<link rel="icon" href="/assets/[^"]+"`).MatchString(page) {
		t.Errorf("the page names no icon of its own: a browser then asks for /favicon.ico (404)")
	}
	links := regexp.MustCompile(`(?:href|src)="(/assets/[^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(links) < 3 {
		t.Fatalf("got %d asset links, want the script, stylesheet and icon", len(links))
	}
	for _, l := range links {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", l[1], nil))
		if rec.Code != 200 {
			t.Errorf("%s: got %d, want 200", l[1], rec.Code)
		}
	}
	m := regexp.MustCompile(`id="nickname"[^>]*maxlength="(\d+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no maxlength on the nickname field")
	}
	if n, _ := strconv.Atoi(m[1]); n != rooms.MaxNicknameLen {
		t.Errorf("nickname maxlength: got %d, want the API's %d", n, rooms.MaxNicknameLen)
	}
}

// TestGuestPageAllowsTheBucket: the page's policy lets it upload to and
// show images from the bucket's origin, and nothing else beyond its own;
// without a bucket, neither.
func TestGuestPageAllowsTheBucket(t *testing.T) {
	csp := func(bucket string) string {
		rec := httptest.NewRecorder()
		guestpage.GuestPageHandler("wss://abc123.execute-api.eu-west-1.amazonaws.com/live", bucket).
			ServeHTTP(rec, httptest.NewRequest("GET", "/rooms/01JD9N113GQYDPWDARF68MKWR7", nil))
		return rec.Header().Get("Content-Security-Policy")
	}
	const bucket = "https://stack-attachmentsbucket-1a2b3c.s3.eu-west-1.amazonaws.com"
	got := csp(bucket)
	for _, want := range []string{"img-src 'self' " + bucket + ";", "connect-src 'self' " + bucket + " wss://abc123.execute-api.eu-west-1.amazonaws.com;", "default-src 'none';"} {
		if !strings.Contains(got, want) {
			t.Errorf("CSP %q lacks %q", got, want)
		}
	}
	for _, b := range []string{"", "https://a.example/path", "javascript:alert(1)", "https://a.example; script-src *"} {
		if got := csp(b); !strings.Contains(got, "img-src 'self';") || !strings.Contains(got, "connect-src 'self' wss://abc123.execute-api.eu-west-1.amazonaws.com;") {
			t.Errorf("bucket %q: CSP %q allows more than the page's own origin and the realtime API", b, got)
		}
	}
}

func TestBucketOrigin(t *testing.T) {
	for _, c := range []struct{ bucket, region, endpoint, want string }{
		{"", "eu-west-1", "", ""},
		{"stack-attachmentsbucket-1a2b3c", "eu-west-1", "", "https://stack-attachmentsbucket-1a2b3c.s3.eu-west-1.amazonaws.com"},
		{"chat-attachments", "", "", "https://chat-attachments.s3.us-east-1.amazonaws.com"},
		{"chat-attachments", "us-east-1", "http://127.0.0.1:4566", "http://127.0.0.1:4566"},
		{"chat-attachments", "us-east-1", "http://127.0.0.1:4566/", "http://127.0.0.1:4566"},
		{"chat-attachments", "us-east-1", "ftp://127.0.0.1:4566", ""},
		{"Chat;attachments", "us-east-1", "", ""},
	} {
		if got := guestpage.BucketOrigin(c.bucket, c.region, c.endpoint); got != c.want {
			t.Errorf("BucketOrigin(%q, %q, %q) = %q, want %q", c.bucket, c.region, c.endpoint, got, c.want)
		}
	}
}
