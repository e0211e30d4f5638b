package messages_test

import (
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/messages"
)

func TestCheckContent(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"plain", "hola", ""},
		{"untrimmed is fine", "  indented\n", ""},
		{"max in multibyte characters", strings.Repeat("é", messages.MaxContentLen), ""},
		{"empty", "", "The content field is required."},
		{"blank", " \t\n\u00a0", "The content field is required."},
		{"too long", strings.Repeat("a", messages.MaxContentLen+1), "The content field must not be greater than 40000 characters."},
		{"too long in emoji", strings.Repeat("😀", messages.MaxContentLen+1), "The content field must not be greater than 40000 characters."},
	} {
		if got := messages.CheckContent(tc.content); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
