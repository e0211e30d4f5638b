package guestpage_test

import (
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"

	"github.com/chatbridge/chat/pkg/guestpage"
	"github.com/chatbridge/chat/pkg/rooms"
)

// TestGuestPageLoadsOnlyWhatItServes: every /assets file the page links
// (its icon included, so that no browser asks for /favicon.ico) is served,
// and the nickname field takes as many characters as the join API.
func TestGuestPageLoadsOnlyWhatItServes(t *testing.T) {
	h := guestpage.GuestPageHandler("")
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
