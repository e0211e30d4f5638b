package webhooks

import (
	"bytes"
	"strconv"

	"github.com/chatbridge/chat/pkg/chat"
)

// rateLimit reads rate_limit (contract section 14): an integer from 1 to
// chat.MaxRateLimit, or null for none (0). A create without it has none.
func (r *reader) rateLimit() (int, bool) {
	raw, ok := r.obj["rate_limit"]
	if !ok {
		return 0, false
	}
	if isNull(raw) {
		return 0, true
	}
	const msg = chat.RateLimitMessage
	// A JSON integer, digits only: not "10", 2.5 or 1e2.
	v, err := strconv.Atoi(string(bytes.TrimSpace(raw)))
	if err != nil || v < 1 || v > chat.MaxRateLimit {
		r.v.Add("rate_limit", msg)
		return 0, false
	}
	return v, true
}
