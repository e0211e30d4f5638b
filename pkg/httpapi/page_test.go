package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chatbridge/chat/internal/apitest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/httpapi"
)

const pageScope = "test-list:" + apitest.WorkspaceID

// listOf serves items through ReadPaging and WritePage; the position after
// items[i] is positions[i] (default "p<i+1>"), and the store ends its own
// page after storeCut items (0: only the limit ends it).
type listOf struct {
	items     []string
	positions []string
	storeCut  int
	noAfter   bool
}

func (l *listOf) position(i int) string {
	if l.positions != nil {
		return l.positions[i]
	}
	return fmt.Sprintf("p%d", i+1)
}

func (l *listOf) page(after string, limit int) chat.Page[string] {
	start := 0
	for i := range l.items {
		if l.position(i) == after {
			start = i + 1
		}
	}
	end := min(start+limit, len(l.items))
	if l.storeCut > 0 {
		end = min(end, start+l.storeCut)
	}
	p := chat.Page[string]{Items: l.items[start:end]}
	for i := start; i < end && !l.noAfter; i++ {
		p.After = append(p.After, l.position(i))
	}
	if end < len(l.items) {
		p.Next = l.position(end - 1)
	}
	return p
}

func (l *listOf) handler(codec *cursor.Codec) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := httpapi.ReadPaging(r, codec, pageScope)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		page := l.page(p.After, p.Limit)
		httpapi.WritePage(w, r, p, page.Items, page)
	})
}

type stringPage struct {
	Data []string `json:"data"`
	Meta struct {
		NextCursor *string `json:"next_cursor"`
		Limit      int     `json:"limit"`
	} `json:"meta"`
}

// get fetches one page and checks that the body is what json.Marshal
// makes of it: the writer's frame matches the one every list had.
func get(t *testing.T, h http.Handler, limit int, cur string) (stringPage, []byte) {
	t.Helper()
	target := fmt.Sprintf("/list?limit=%d", limit)
	if cur != "" {
		target += "&cursor=" + url.QueryEscape(cur)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	if rec.Code != 200 {
		t.Fatalf("GET %s: %d %.200s", target, rec.Code, rec.Body)
	}
	var p stringPage
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	again, _ := json.Marshal(p)
	if string(again) != rec.Body.String() {
		t.Fatalf("GET %s: body %.200s is not json.Marshal's %.200s", target, rec.Body, again)
	}
	if cl := rec.Header().Get("Content-Length"); cl != fmt.Sprint(rec.Body.Len()) || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("GET %s: Content-Length %s for %d bytes, Cache-Control %q", target, cl, rec.Body.Len(), rec.Header().Get("Cache-Control"))
	}
	return p, rec.Body.Bytes()
}

// frame returns the length of a page body of data with cursor c (nil: null).
func frame(t *testing.T, data []string, c *string, limit int) int {
	t.Helper()
	var p stringPage
	p.Data, p.Meta.NextCursor, p.Meta.Limit = data, c, limit
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// TestPageAtTheExactEdge: a body of exactly MaxPageBytes holds both items;
// one byte more moves the second item to the next page, and the cursor of
// the first page resumes exactly there. Both with the list ending (null
// cursor) and with more to come (the cursor's length counts).
func TestPageAtTheExactEdge(t *testing.T) {
	codec := apitest.Codec(t)
	for _, more := range []bool{false, true} {
		for _, extra := range []int{0, 1} {
			items := []string{"<first \u2028 item>", "", "third"}
			if !more {
				items = items[:2]
			}
			var c *string
			if more {
				s := codec.Encode(pageScope, "p2")
				c = &s
			}
			// The second item pads the two-item body to exactly the budget, plus extra.
			items[1] = strings.Repeat("b", httpapi.MaxPageBytes-frame(t, items[:2], c, 2)+extra)
			h := (&listOf{items: items}).handler(codec)
			p, body := get(t, h, 2, "")
			name := fmt.Sprintf("more %v, %d byte(s) over", more, extra)
			switch {
			case extra == 0 && (len(body) != httpapi.MaxPageBytes || len(p.Data) != 2 || (p.Meta.NextCursor != nil) != more):
				t.Fatalf("%s: %d bytes, %d items, next %v; want exactly %d bytes, 2 items", name, len(body), len(p.Data), p.Meta.NextCursor, httpapi.MaxPageBytes)
			case extra == 1 && (len(body) > httpapi.MaxPageBytes || len(p.Data) != 1 || p.Meta.NextCursor == nil):
				t.Fatalf("%s: %d bytes, %d items, next %v; want 1 item and a cursor", name, len(body), len(p.Data), p.Meta.NextCursor)
			}
			// Following the cursors yields every item once.
			got := p.Data
			for p.Meta.NextCursor != nil {
				p, body = get(t, h, 2, *p.Meta.NextCursor)
				if len(body) > httpapi.MaxPageBytes || len(p.Data) == 0 {
					t.Fatalf("%s: a following page of %d bytes and %d items", name, len(body), len(p.Data))
				}
				got = append(got, p.Data...)
			}
			if fmt.Sprint(got) != fmt.Sprint(items) {
				t.Fatalf("%s: listed %d items, want the %d items once each, in order", name, len(got), len(items))
			}
		}
	}
}

// TestPageCutShortByTheStoreHasACursor: a store that ends its page before
// the limit (DynamoDB's 1 MB) makes a short page with a cursor, not the end.
func TestPageCutShortByTheStoreHasACursor(t *testing.T) {
	l := &listOf{items: []string{"a", "b", "c", "d", "e"}, storeCut: 2}
	h := l.handler(apitest.Codec(t))
	var sizes []int
	var got []string
	for p, cur := (stringPage{}), ""; ; cur = *p.Meta.NextCursor {
		p, _ = get(t, h, 5, cur)
		sizes, got = append(sizes, len(p.Data)), append(got, p.Data...)
		if p.Meta.NextCursor == nil {
			break
		}
	}
	if fmt.Sprint(sizes) != "[2 2 1]" || strings.Join(got, "") != "abcde" {
		t.Fatalf("pages %v of %v, want [2 2 1] of abcde", sizes, got)
	}
}

// TestPageItemOfMaxItemBytesFitsAlone: an item of exactly MaxItemBytes,
// followed by the longest position a cursor carries, at the largest limit,
// makes a body of exactly MaxPageBytes.
func TestPageItemOfMaxItemBytesFitsAlone(t *testing.T) {
	codec := apitest.Codec(t)
	long := strings.Repeat("x", cursor.MaxPositionLen)
	if n := len(codec.Encode(pageScope, long)); n != cursor.MaxTokenLen {
		t.Fatalf("the longest position makes a cursor of %d characters, want %d", n, cursor.MaxTokenLen)
	}
	next := strings.Repeat("n", 3000) // too long to follow it on the page
	l := &listOf{items: []string{strings.Repeat("i", httpapi.MaxItemBytes-2), next}, positions: []string{long, "p2"}}
	p, body := get(t, l.handler(codec), 100, "")
	if len(body) != httpapi.MaxPageBytes || len(p.Data) != 1 || p.Meta.NextCursor == nil {
		t.Fatalf("%d bytes, %d items, next %v; want exactly %d bytes, 1 item, a cursor", len(body), len(p.Data), p.Meta.NextCursor, httpapi.MaxPageBytes)
	}
	if p, _ = get(t, l.handler(codec), 100, *p.Meta.NextCursor); len(p.Data) != 1 || p.Data[0] != next || p.Meta.NextCursor != nil {
		t.Fatalf("second page of %d items, next %v; want the second item and null", len(p.Data), p.Meta.NextCursor)
	}
}

// TestPageOversizedItemIsShownAlone: no list has an item over
// MaxItemBytes, but if one had, it would be shown alone rather than make a
// page that is empty and not the last (the list would never move on).
func TestPageOversizedItemIsShownAlone(t *testing.T) {
	l := &listOf{items: []string{strings.Repeat("<", httpapi.MaxPageBytes/6), "after"}}
	h := l.handler(apitest.Codec(t))
	p, body := get(t, h, 25, "")
	if len(p.Data) != 1 || p.Meta.NextCursor == nil || len(body) <= httpapi.MaxPageBytes {
		t.Fatalf("%d bytes, %d items, next %v; want the item alone, over the budget, with a cursor", len(body), len(p.Data), p.Meta.NextCursor)
	}
	// Even so, Lambda's 6 MB response holds it as the adapter sends it: a
	// JSON string or base64.
	asString, _ := json.Marshal(string(body))
	if len(asString) > 6_000_000 || base64.StdEncoding.EncodedLen(len(body)) > 6_000_000 {
		t.Fatalf("the body takes %d bytes as a JSON string, over Lambda's 6 MB", len(asString))
	}
	if p, _ = get(t, h, 25, *p.Meta.NextCursor); fmt.Sprint(p.Data) != "[after]" {
		t.Fatalf("second page %v, want [after]", p.Data)
	}
}

// TestPageWithoutPositionsIsAnInternalError: a store that gives no
// position after each item could not be cut safely; that is a bug,
// answered 500, never a cursor that skips or repeats.
func TestPageWithoutPositionsIsAnInternalError(t *testing.T) {
	h := (&listOf{items: []string{"a", "b", "c"}, noAfter: true}).handler(apitest.Codec(t))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/list?limit=2", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), "internal_error") {
		t.Fatalf("got %d %s, want 500 internal_error", rec.Code, rec.Body)
	}
}

// TestEmptyLastPage: an empty list is one page, [] and null.
func TestEmptyLastPage(t *testing.T) {
	p, body := get(t, (&listOf{}).handler(apitest.Codec(t)), 25, "")
	if string(body) != `{"data":[],"meta":{"next_cursor":null,"limit":25}}` || len(p.Data) != 0 {
		t.Fatalf("body %s", body)
	}
}
