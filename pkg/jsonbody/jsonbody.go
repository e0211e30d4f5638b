// Package jsonbody decodes request bodies strictly: exactly one JSON
// object, valid UTF-8, no duplicate keys, bounded nesting. encoding/json
// would quietly accept each of those (replacing bad bytes, keeping the last
// duplicate), which lets two components read one body differently.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/chat"
)

// ErrInvalid is the contract's 400 for a body that is not a JSON object.
func ErrInvalid() error {
	return chat.Errorf(chat.EInvalidJSON, "The request body must be a JSON object.")
}

// maxDepth bounds JSON nesting; no request of the contract nests deeper
// than two levels, so anything past this is hostile.
const maxDepth = 32

// Object is a decoded top-level JSON object, field by field.
type Object map[string]json.RawMessage

// ParseObject decodes b as one JSON object. It refuses what encoding/json
// would quietly accept: invalid UTF-8 (which it would replace), duplicate
// keys (which it would resolve last-wins), trailing data, and nesting past
// maxDepth.
func ParseObject(b []byte) (Object, error) {
	if !utf8.Valid(b) || !pairedSurrogates(b) {
		return nil, ErrInvalid()
	}
	if err := checkStructure(b); err != nil {
		return nil, ErrInvalid()
	}
	var obj Object
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return nil, ErrInvalid()
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

// IsNull reports whether a field is absent or JSON null.
func (o Object) IsNull(name string) bool {
	raw, ok := o[name]
	return !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// String reads an optional string field. present is false when the field
// is absent or null; a value of another type is recorded on v.
func (o Object) String(v *chat.Validation, name, label string) (s string, present bool) {
	if o.IsNull(name) {
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
	if o.IsNull(name) {
		return false, false
	}
	if err := json.Unmarshal(o[name], &b); err != nil {
		v.Add(name, "The "+label+" field must be true or false.")
		return false, false
	}
	return b, true
}

// pairedSurrogates reports whether every \uD800-\uDFFF escape in b is half
// of a valid surrogate pair. encoding/json turns a lone one into U+FFFD,
// the same silent repair it makes of invalid UTF-8. In valid JSON a
// backslash only occurs inside a string, so scanning every escape is enough.
func pairedSurrogates(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++
		if i >= len(b) || b[i] != 'u' {
			continue // a one-character escape, skipped whole
		}
		r, ok := hex4(b, i+1)
		if !ok {
			return true // malformed: the decoder refuses it
		}
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false // a low half with no high half before it
		case r >= 0xD800 && r <= 0xDBFF:
			if i+2 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
				return false
			}
			lo, ok := hex4(b, i+3)
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

// hex4 parses the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
