package chat

import (
	"errors"
	"fmt"
)

// Error codes of the API (docs/api.md). Every error that
// reaches a client carries exactly one of them.
const (
	EInvalidJSON            = "invalid_json"
	EUnauthenticated        = "unauthenticated"
	EForbidden              = "forbidden"
	ENotFound               = "not_found"
	EMethodNotAllowed       = "method_not_allowed"
	ERoomExpired            = "temporary_room_expired"
	EPayloadTooLarge        = "payload_too_large"
	EUnsupportedMediaType   = "unsupported_media_type"
	EValidation             = "validation_failed"
	EQuotaExceeded          = "quota_exceeded"
	EInternal               = "internal_error"
	EUnavailable            = "service_unavailable"
	EWebhookNotFound        = "webhook_not_found"
	EMissingCredentials     = "missing_credentials"
	EInvalidSecret          = "invalid_secret"
	EMissingSignature       = "missing_signature"
	EInvalidSignatureHeader = "invalid_signature_header"
	ESignatureExpired       = "signature_expired"
	EInvalidSignature       = "invalid_signature"
	ESignatureReplayed      = "signature_replayed"
	EInvalidIdempotencyKey  = "invalid_idempotency_key"
	EIdempotencyKeyReused   = "idempotency_key_reused"
	EIdempotencyKeyInUse    = "idempotency_key_in_use"
	ERoomFull               = "room_full"
	ERedeliveryPending      = "redelivery_pending"
	ERateLimited            = "rate_limited"
	EMessageDeleted         = "message_deleted"
	ERevisionMismatch       = "revision_mismatch"
	// EConflict is internal: a conditional write lost a race. Callers retry
	// or translate it into a contract code; it never reaches a client as is.
	EConflict = "conflict"
)

// Error is the one error type of the service. Code is a contract code;
// Message is a sentence safe to show to the client; Fields holds per-field
// messages of a validation error; Err is an internal cause that is logged
// and never shown.
type Error struct {
	Code       string
	Message    string
	Fields     map[string][]string
	FieldOrder []string
	// RetryAfter, when positive, is sent as the Retry-After header (seconds).
	RetryAfter int
	Err        error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with code and a client-safe message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Internal wraps an unexpected failure. Its text is logged, never sent.
func Internal(err error) *Error {
	return &Error{Code: EInternal, Message: "Something went wrong on our side.", Err: err}
}

// Unavailable reports a dependency that failed after retries.
func Unavailable(err error) *Error {
	return &Error{Code: EUnavailable, Message: "The service is temporarily unavailable. Retry later.", RetryAfter: 1, Err: err}
}

// ErrorCode returns the code of err: the code of the first *Error in its
// chain, EInternal for any other non-nil error, "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// IsCode reports whether err carries code.
func IsCode(err error, code string) bool { return err != nil && ErrorCode(err) == code }

// Validation collects field errors in the order they are added, so that the
// first one becomes the message (Laravel style, as the contract fixes).
type Validation struct{ err *Error }

// Add records msg for field.
func (v *Validation) Add(field, msg string) {
	if v.err == nil {
		v.err = &Error{Code: EValidation, Fields: map[string][]string{}}
	}
	if _, ok := v.err.Fields[field]; !ok {
		v.err.FieldOrder = append(v.err.FieldOrder, field)
	}
	v.err.Fields[field] = append(v.err.Fields[field], msg)
	if v.err.Message == "" {
		v.err.Message = msg
	}
}

// Has reports whether field already has an error.
func (v *Validation) Has(field string) bool {
	return v.err != nil && len(v.err.Fields[field]) > 0
}

// Err returns the collected *Error, or nil when nothing was added.
func (v *Validation) Err() error {
	if v.err == nil {
		return nil
	}
	return v.err
}

// FieldError returns a validation error for one field.
func FieldError(field, msg string) *Error {
	var v Validation
	v.Add(field, msg)
	return v.err
}
