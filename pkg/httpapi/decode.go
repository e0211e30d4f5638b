package httpapi

import (
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
)

// MaxBodyBytes bounds every JSON request body (contract: 64 KiB).
const MaxBodyBytes = 64 << 10

var (
	errTooLarge  = chat.Errorf(chat.EPayloadTooLarge, "The request body must not be larger than 64 KiB.")
	errMediaType = chat.Errorf(chat.EUnsupportedMediaType, "The request body must be sent as application/json.")
)

// CheckContentType refuses a Content-Type that is present and not JSON.
func CheckContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if strings.TrimSpace(ct) == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return errMediaType
	}
	if mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return errMediaType
}

// ReadBody reads at most MaxBodyBytes of the body; more is a 413.
func ReadBody(r *http.Request) ([]byte, error) {
	return readBody(r, MaxBodyBytes, errTooLarge)
}

func readBody(r *http.Request, max int64, tooLarge error) ([]byte, error) {
	if r.ContentLength > max {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return nil, jsonbody.ErrInvalid()
	}
	if int64(len(b)) > max {
		return nil, tooLarge
	}
	return b, nil
}

// ReadLargeObject is ReadObject for an endpoint whose body may be up to
// max bytes (a glossary): past it, 413 payload_too_large naming the limit.
func ReadLargeObject(r *http.Request, max int64) (Object, error) {
	if err := CheckContentType(r); err != nil {
		return nil, err
	}
	b, err := readBody(r, max, chat.Errorf(chat.EPayloadTooLarge, "The request body must not be larger than %d KiB.", max>>10))
	if err != nil {
		return nil, err
	}
	return jsonbody.ParseObject(b)
}

// Object is a decoded top-level JSON object, field by field.
type Object = jsonbody.Object

// ReadObject applies the content-type, size and JSON checks in the
// contract's order and returns the object and the raw body.
func ReadObject(r *http.Request) (Object, []byte, error) {
	if err := CheckContentType(r); err != nil {
		return nil, nil, err
	}
	b, err := ReadBody(r)
	if err != nil {
		return nil, nil, err
	}
	obj, err := jsonbody.ParseObject(b)
	return obj, b, err
}
