package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/chatbridge/chat/pkg/chat"
)

// MaxPageBytes bounds the body of a list response (contract section 1,
// "Lists"): a page ends before the item that would take its body past it.
const MaxPageBytes = 1 << 20

// The frame of a list body around its items: what json.Marshal makes of
// {"data": [...], "meta": {"next_cursor": c, "limit": n}}.
const (
	pageOpen  = `{"data":[`
	metaOpen  = `],"meta":{"next_cursor":`
	limitOpen = `,"limit":`
	pageClose = `}}`
)

// MaxCursorLen is the longest cursor the lists accept, in characters:
// cursor.MaxTokenLen, which a test holds it equal to (httpapi does not
// import package cursor, so that the functions that do not page do not
// link it).
const MaxCursorLen = 2048

// MaxItemBytes is the longest encoded item that always fits in a page
// alone: MaxPageBytes less the frame with the longest cursor that
// cursor.Decode accepts and a three-digit limit (workspaces.MaxLimit is
// 100). A list whose item can be longer must shrink it before writing (as
// the guest message list does with an oversized translation).
const MaxItemBytes = MaxPageBytes - len(pageOpen) - len(metaOpen) - len(`""`) - MaxCursorLen -
	len(limitOpen) - len("100") - len(pageClose)

// ServePage answers a list request: it reads the paging bound to scope
// (ReadPaging), lists the page after its cursor, and writes it with each
// item as view shows it (WritePage). A paging error is answered before
// list runs.
func ServePage[T, V any](w http.ResponseWriter, r *http.Request, codec Cursors, scope string,
	list func(ctx context.Context, after string, limit int) (chat.Page[T], error), view func(T) V) {
	paging, err := ReadPaging(r, codec, scope)
	if err != nil {
		Error(w, r, err)
		return
	}
	page, err := list(r.Context(), paging.After, paging.Limit)
	if err != nil {
		Error(w, r, err)
		return
	}
	views := make([]V, 0, len(page.Items))
	for _, it := range page.Items {
		views = append(views, view(it))
	}
	WritePage(w, r, paging, views, page)
}

// WritePage writes page as a 200 list body, views[i] being what the client
// sees of page.Items[i] (see WriteList).
func WritePage[T, V any](w http.ResponseWriter, r *http.Request, p Paging, views []V, page chat.Page[T]) {
	if len(views) != len(page.Items) {
		Error(w, r, chat.Internal(fmt.Errorf("httpapi: list %s: %d views of %d items", p.scope, len(views), len(page.Items))))
		return
	}
	WriteList(w, r, p, len(views), func(i int) ([]byte, error) { return json.Marshal(views[i]) }, page.Rest)
}

// WriteList writes a 200 list body of n items, encoding item i with
// encode(i), and ends the page before the first item that would take the
// body past MaxPageBytes. next_cursor carries rest(k), the position after
// the k items shown ("" when none follows them: null), so the next page
// starts exactly after the last item shown. The first item is always
// shown, so that every page but the last makes progress: an item longer
// than MaxItemBytes is shown alone, over the budget, and logged (no list
// has such items; see docs/decisions.md, "Lists and page size").
func WriteList(w http.ResponseWriter, r *http.Request, p Paging, n int, encode func(i int) ([]byte, error), rest func(k int) (string, bool)) {
	body := append(make([]byte, 0, 4096), pageOpen...)
	var tail []byte
	var err error
	if n == 0 {
		tail, err = p.tail(rest, 0)
	}
	for i := 0; i < n && err == nil; i++ {
		var item, t []byte
		if item, err = encode(i); err != nil {
			break
		}
		if t, err = p.tail(rest, i+1); err != nil {
			break
		}
		size := len(body) + len(item) + len(t)
		if i > 0 {
			size++ // the comma
		}
		if size > MaxPageBytes {
			if i > 0 {
				break
			}
			slog.WarnContext(r.Context(), "list item alone exceeds the page budget", "list", p.scope, "bytes", len(item))
		}
		if i > 0 {
			body = append(body, ',')
		}
		body, tail = append(body, item...), t
	}
	if err != nil {
		Error(w, r, chat.Internal(fmt.Errorf("httpapi: list %s: %w", p.scope, err)))
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	RawJSON(w, http.StatusOK, append(body, tail...))
}

// tail returns the end of a list body that shows k items: the cursor of
// rest(k) (null when it is "") and the limit.
func (p Paging) tail(rest func(k int) (string, bool), k int) ([]byte, error) {
	pos, ok := rest(k)
	if !ok {
		return nil, fmt.Errorf("no position after item %d", k)
	}
	b := append(make([]byte, 0, 128), metaOpen...)
	if pos == "" {
		b = append(b, "null"...)
	} else {
		if !p.codec.Fits(pos) {
			return nil, fmt.Errorf("position after item %d cannot be a cursor", k)
		}
		b = append(append(append(b, '"'), p.codec.Encode(p.scope, pos)...), '"')
	}
	b = strconv.AppendInt(append(b, limitOpen...), int64(p.Limit), 10)
	return append(b, pageClose...), nil
}
