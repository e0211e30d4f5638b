package chat

import "net/http"

// statuses maps every contract code to its HTTP status. A code missing here
// is a programming error and is answered as 500.
var statuses = map[string]int{
	EInvalidJSON:            http.StatusBadRequest,
	EInvalidIdempotencyKey:  http.StatusBadRequest,
	EUnauthenticated:        http.StatusUnauthorized,
	EMissingCredentials:     http.StatusUnauthorized,
	EInvalidSecret:          http.StatusUnauthorized,
	EMissingSignature:       http.StatusUnauthorized,
	EInvalidSignatureHeader: http.StatusUnauthorized,
	ESignatureExpired:       http.StatusUnauthorized,
	EInvalidSignature:       http.StatusUnauthorized,
	ESignatureReplayed:      http.StatusUnauthorized,
	EForbidden:              http.StatusForbidden,
	ENotFound:               http.StatusNotFound,
	EWebhookNotFound:        http.StatusNotFound,
	EMethodNotAllowed:       http.StatusMethodNotAllowed,
	EIdempotencyKeyInUse:    http.StatusConflict,
	ERoomFull:               http.StatusConflict,
	ERedeliveryPending:      http.StatusConflict,
	ERateLimited:            http.StatusTooManyRequests,
	ERoomExpired:            http.StatusGone,
	EMessageDeleted:         http.StatusGone,
	ERevisionMismatch:       http.StatusPreconditionFailed,
	EPayloadTooLarge:        http.StatusRequestEntityTooLarge,
	EUnsupportedMediaType:   http.StatusUnsupportedMediaType,
	EValidation:             http.StatusUnprocessableEntity,
	EIdempotencyKeyReused:   http.StatusUnprocessableEntity,
	EQuotaExceeded:          http.StatusTooManyRequests,
	EInternal:               http.StatusInternalServerError,
	EUnavailable:            http.StatusServiceUnavailable,
}

// Status returns the HTTP status of code: the one table of the service,
// used by the HTTP error writer and by the request log.
func Status(code string) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}
