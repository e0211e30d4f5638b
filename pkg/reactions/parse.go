package reactions

import "github.com/chatbridge/chat/pkg/chat"

// Parse is replaced below.
func Parse(segment string) (string, error) {
	if segment == "" {
		return "", chat.FieldError("emoji", "Give one emoji.")
	}
	return segment, nil
}
