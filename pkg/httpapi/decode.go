package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/chat"
)

// MaxBodyBytes bounds every JSON request body (contract: 64 KiB).
const MaxBodyBytes = 64 << 10

// maxDepth bounds JSON nesting; no request of the contract nests deeper
// than two levels, so anything past this is hostile.
const maxDepth = 32

var (
	errInvalidJSON = chat.Errorf(chat.EInvalidJSON, "The request body must be a JSON object.")
	errTooLarge    = chat.Errorf(chat.EPayloadTooLarge, "The request body must not be larger than 64 KiB.")
	errMediaType   = chat.Errorf(chat.EUnsupportedMediaType, "The request body must be sent as application/json.")
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
	if r.ContentLength > MaxBodyBytes {
		return nil, errTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, errInvalidJSON
	}
	if len(b) > MaxBodyBytes {
		return nil, errTooLarge
	}
	return b, nil
}

// Object is a decoded top-level JSON object, field by field.
type Object map[string]json.RawMessage

// ParseObject decodes b as one JSON object. It refuses what encoding/json
// would quietly accept: invalid UTF-8 (which it would replace), duplicate
// keys (which it would resolve last-wins), trailing data, and nesting past
// maxDepth.
func ParseObject(b []byte) (Object, error) {
	if !utf8.Valid(b) {
		return nil, errInvalidJSON
	}
	if err := checkStructure(b); err != nil {
		return nil, errInvalidJSON
	}
	var obj Object
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return nil, errInvalidJSON
	}
	return obj, nil
}

func checkStructure(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	first, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := first.(json.Delim); !ok || d != '{' {
		return errors.New("not an object")
	}
	if err := walkObject(dec, 1); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

// walkObject consumes an object whose '{' was read, checking keys.
func walkObject(dec *json.Decoder, depth int) error {
	if depth > maxDepth {
		return errors.New("too deep")
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		k, ok := t.(string)
		if !ok {
			return errors.New("key is not a string")
		}
		if seen[k] {
			return errors.New("duplicate key")
		}
		seen[k] = true
		if err := walkValue(dec, depth); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

func walkValue(dec *json.Decoder, depth int) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := t.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		return walkObject(dec, depth+1)
	case '[':
		if depth+1 > maxDepth {
			return errors.New("too deep")
		}
		for dec.More() {
			if err := walkValue(dec, depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ']'
		return err
	}
	return errors.New("unexpected delimiter")
}

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
	obj, err := ParseObject(b)
	return obj, b, err
}

// isNull reports whether a field is absent or JSON null.
func (o Object) isNull(name string) bool {
	raw, ok := o[name]
	return !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// String reads an optional string field. present is false when the field
// is absent or null; a value of another type is recorded on v.
func (o Object) String(v *chat.Validation, name, label string) (s string, present bool) {
	if o.isNull(name) {
		return "", false
	}
	if err := json.Unmarshal(o[name], &s); err != nil {
		v.Add(name, "The "+label+" field must be a string.")
		return "", false
	}
	return s, true
}

// Bool reads an optional boolean field.
func (o Object) Bool(v *chat.Validation, name, label string) (b bool, present bool) {
	if o.isNull(name) {
		return false, false
	}
	if err := json.Unmarshal(o[name], &b); err != nil {
		v.Add(name, "The "+label+" field must be true or false.")
		return false, false
	}
	return b, true
}
