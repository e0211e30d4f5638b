// Package apitest holds what the HTTP handler packages' tests share: a
// workspace id, a page of a slice, a JSON body decoder and an authorizer
// of a given role.
package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/workspaces"
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

// RoleAuth authorizes every request as Role in the path's workspace, or
// refuses it with Err.
type RoleAuth struct {
	Role string
	Err  error
}

// Authorize implements httpapi.Authorizer.
func (a RoleAuth) Authorize(_ context.Context, _, ws string) (workspaces.Principal, error) {
	if a.Err != nil {
		return workspaces.Principal{}, a.Err
	}
	return workspaces.Principal{WorkspaceID: ws, Role: a.Role}, nil
}
