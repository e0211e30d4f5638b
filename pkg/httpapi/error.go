package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/chatbridge/chat/pkg/chat"
)

// StatusOf returns the HTTP status of err's code.
func StatusOf(err error) int { return chat.Status(chat.ErrorCode(err)) }

type errorBody struct {
	Message string              `json:"message"`
	Errors  map[string][]string `json:"errors,omitempty"`
}

// Error writes err in the contract's shape. Internal errors are logged with
// their cause and answered with a fixed sentence; nothing else is logged as
// an error.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	var e *chat.Error
	if !errors.As(err, &e) || chat.Status(e.Code) == http.StatusInternalServerError && e.Code != chat.EInternal {
		e = chat.Internal(err)
	}
	status := chat.Status(e.Code)
	if status >= 500 {
		slog.ErrorContext(r.Context(), "request failed", "code", e.Code, "error", e.Error(), "path", r.URL.Path)
	}
	noteError(r, e.Code)
	body := errorBody{Message: e.Message}
	switch e.Code {
	case chat.EUnauthenticated:
		body.Message = "Unauthenticated."
	case chat.EValidation:
		body.Errors = e.Fields
	default:
		body.Errors = map[string][]string{"code": {e.Code}}
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	JSON(w, status, body)
}

// JSON writes v with status.
func JSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"message":"Something went wrong on our side.","errors":{"code":["internal_error"]}}`)
	}
	RawJSON(w, status, b)
}

// RawJSON writes an already encoded JSON body with status.
func RawJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// Nullable is s, or nil (JSON null) when s is empty.
func Nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
