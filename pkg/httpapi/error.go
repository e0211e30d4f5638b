package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/chatbridge/chat/pkg/chat"
)

// statusOf maps every contract code to its HTTP status. A code missing here
// is a programming error and is answered as 500.
var statusOf = map[string]int{
	chat.EInvalidJSON:            http.StatusBadRequest,
	chat.EInvalidIdempotencyKey:  http.StatusBadRequest,
	chat.EUnauthenticated:        http.StatusUnauthorized,
	chat.EMissingCredentials:     http.StatusUnauthorized,
	chat.EInvalidSecret:          http.StatusUnauthorized,
	chat.EMissingSignature:       http.StatusUnauthorized,
	chat.EInvalidSignatureHeader: http.StatusUnauthorized,
	chat.ESignatureExpired:       http.StatusUnauthorized,
	chat.EInvalidSignature:       http.StatusUnauthorized,
	chat.ESignatureReplayed:      http.StatusUnauthorized,
	chat.EForbidden:              http.StatusForbidden,
	chat.ENotFound:               http.StatusNotFound,
	chat.EWebhookNotFound:        http.StatusNotFound,
	chat.EMethodNotAllowed:       http.StatusMethodNotAllowed,
	chat.EIdempotencyKeyInUse:    http.StatusConflict,
	chat.ERoomExpired:            http.StatusGone,
	chat.EPayloadTooLarge:        http.StatusRequestEntityTooLarge,
	chat.EUnsupportedMediaType:   http.StatusUnsupportedMediaType,
	chat.EValidation:             http.StatusUnprocessableEntity,
	chat.EIdempotencyKeyReused:   http.StatusUnprocessableEntity,
	chat.EQuotaExceeded:          http.StatusTooManyRequests,
	chat.EInternal:               http.StatusInternalServerError,
	chat.EUnavailable:            http.StatusServiceUnavailable,
}

// StatusOf returns the HTTP status of err's code.
func StatusOf(err error) int {
	if s, ok := statusOf[chat.ErrorCode(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

type errorBody struct {
	Message string              `json:"message"`
	Errors  map[string][]string `json:"errors,omitempty"`
}

// Error writes err in the contract's shape. Internal errors are logged with
// their cause and answered with a fixed sentence; nothing else is logged as
// an error.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	e, ok := err.(*chat.Error)
	if !ok || statusOf[e.Code] == 0 {
		e = chat.Internal(err)
	}
	status := statusOf[e.Code]
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
