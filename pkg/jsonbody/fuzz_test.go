package jsonbody_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
)

// FuzzParseObject checks that ParseObject never panics, refuses only with
// invalid_json, refuses invalid UTF-8, and that what it accepts is one JSON
// object that re-marshals to an equal object, and that stops being
// accepted once a duplicate of one of its keys or an invalid UTF-8 byte is
// added. Seeds live in testdata/fuzz/FuzzParseObject.
func FuzzParseObject(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		obj, err := jsonbody.ParseObject(b)
		if err != nil {
			if !chat.IsCode(err, chat.EInvalidJSON) {
				t.Fatalf("ParseObject(%q): got %v, want %s", b, err, chat.EInvalidJSON)
			}
			if obj != nil {
				t.Fatalf("ParseObject(%q) returned an object with its error", b)
			}
			return
		}
		if obj == nil {
			t.Fatalf("ParseObject(%q) accepted without an object", b)
		}
		if !utf8.Valid(b) {
			t.Fatalf("ParseObject(%q) accepted invalid UTF-8", b)
		}
		if !json.Valid(b) {
			t.Fatalf("ParseObject(%q) accepted what encoding/json calls invalid", b)
		}
		// Accepted objects re-marshal, and the result is accepted as the
		// same object, value by value.
		again, err := json.Marshal(obj)
		if err != nil {
			t.Fatalf("ParseObject(%q) accepted an object that does not marshal: %v", b, err)
		}
		obj2, err := jsonbody.ParseObject(again)
		if err != nil {
			t.Fatalf("ParseObject(%q) accepted, but refused its re-marshalled form %q: %v", b, again, err)
		}
		if len(obj2) != len(obj) {
			t.Fatalf("ParseObject(%q): %d fields, re-marshalled %d", b, len(obj), len(obj2))
		}
		for k, v := range obj {
			if a, b2 := decodeValue(t, v), decodeValue(t, obj2[k]); !reflect.DeepEqual(a, b2) {
				t.Fatalf("ParseObject(%q): field %q = %#v, re-marshalled %#v", b, k, a, b2)
			}
		}
		// The accessors read a field as its JSON type says: a string or a
		// boolean is present, null is absent, anything else is a field error.
		for k, raw := range obj {
			raw = bytes.TrimSpace(raw)
			var vs, vb chat.Validation
			_, isString := obj.String(&vs, k, k)
			_, isBool := obj.Bool(&vb, k, k)
			null := bytes.Equal(raw, []byte("null"))
			if null != obj.IsNull(k) {
				t.Fatalf("ParseObject(%q): IsNull(%q) = %v for %s", b, k, !null, raw)
			}
			if wantString := raw[0] == '"'; isString != wantString || vs.Has(k) != (!wantString && !null) {
				t.Fatalf("ParseObject(%q): String(%q) = %v (error %v) for %s", b, k, isString, vs.Has(k), raw)
			}
			if wantBool := raw[0] == 't' || raw[0] == 'f'; isBool != wantBool || vb.Has(k) != (!wantBool && !null) {
				t.Fatalf("ParseObject(%q): Bool(%q) = %v (error %v) for %s", b, k, isBool, vb.Has(k), raw)
			}
		}
		open := bytes.IndexByte(b, '{')
		// A duplicate of any key, however it is escaped, spoils the object.
		for k := range obj {
			quoted, _ := json.Marshal(k)
			dup := splice(b, open+1, string(quoted)+":0,")
			if _, err := jsonbody.ParseObject(dup); err == nil {
				t.Fatalf("ParseObject(%q) accepted a duplicate key %q", dup, k)
			}
			break
		}
		// So does an invalid UTF-8 byte in a new key.
		field := "\"\xff\":0"
		if len(obj) > 0 {
			field += ","
		}
		bad := splice(b, open+1, field)
		if _, err := jsonbody.ParseObject(bad); err == nil {
			t.Fatalf("ParseObject(%q) accepted invalid UTF-8", bad)
		}
	})
}

// decodeValue decodes one JSON value, keeping numbers as written.
func decodeValue(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("value %q does not decode: %v", raw, err)
	}
	return v
}

// splice returns a copy of b with s inserted at i.
func splice(b []byte, i int, s string) []byte {
	out := make([]byte, 0, len(b)+len(s))
	out = append(out, b[:i]...)
	out = append(out, s...)
	return append(out, b[i:]...)
}
