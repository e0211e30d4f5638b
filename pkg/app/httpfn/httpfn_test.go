package httpfn_test

import (
	"testing"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/httpapi"
)

// TestCursorBoundsMatchPackageCursor: httpfn and httpapi hold cursor's
// bounds without importing it, so that the functions that do not page do
// not link it; the copies must stay equal.
func TestCursorBoundsMatchPackageCursor(t *testing.T) {
	if app.MinCursorKeyLen != cursor.MinKeyLen {
		t.Errorf("app.MinCursorKeyLen %d, cursor.MinKeyLen %d: want them equal", app.MinCursorKeyLen, cursor.MinKeyLen)
	}
	if httpapi.MaxCursorLen != cursor.MaxTokenLen {
		t.Errorf("httpapi.MaxCursorLen %d, cursor.MaxTokenLen %d: want them equal", httpapi.MaxCursorLen, cursor.MaxTokenLen)
	}
	if _, err := cursor.New(make([]byte, app.MinCursorKeyLen-1)); err == nil {
		t.Errorf("cursor.New accepts a key of %d bytes, which httpfn refuses", app.MinCursorKeyLen-1)
	}
	var _ httpapi.Cursors = (*cursor.Codec)(nil)
}
