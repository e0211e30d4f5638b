// Package apitest holds what the HTTP handler packages' tests share: a
// workspace id, a page of a slice and a JSON body decoder.
package apitest

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
)

// WorkspaceID is the workspace the handler tests' principals belong to.
const WorkspaceID = "01JDZ8Y7K3Q4W5E6R7T8Y9A0WS"

// PageOf is the page of items after position after ("pos-<n>"), of at
// most limit items, with a position for each item and a next cursor when
// items remain.
func PageOf[T any](items []T, after string, limit int) chat.Page[T] {
	start := 0
	if after != "" {
		fmt.Sscanf(after, "pos-%d", &start)
	}
	end := min(start+limit, len(items))
	p := chat.Page[T]{Items: items[start:end]}
	for i := start; i < end; i++ {
		p.After = append(p.After, fmt.Sprintf("pos-%d", i+1))
	}
	if end < len(items) {
		p.Next = fmt.Sprintf("pos-%d", end)
	}
	return p
}

// Decode is rec's body as a JSON object; anything else fails t.
func Decode(t testing.TB, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("body %q is not JSON: %v", rec.Body.String(), err)
	}
	return v
}

// Codec is a cursor codec with a fixed test key.
func Codec(t testing.TB) *cursor.Codec {
	t.Helper()
	c, err := cursor.New([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatalf("cursor: %v", err)
	}
	return c
}
