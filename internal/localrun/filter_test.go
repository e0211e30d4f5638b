package localrun

import (
	"encoding/json"
	"testing"
)

// TestFilterPatterns: the template's patterns, against records as Lambda's
// event JSON shows them; an operator the emulation lacks is refused.
func TestFilterPatterns(t *testing.T) {
	f, err := newFilter([]string{
		`{"eventName": ["INSERT"], "dynamodb": {"Keys": {"sk": {"S": [{"prefix": "MSG#"}]}}}}`,
		`{"eventName": ["MODIFY"], "dynamodb": {"Keys": {"sk": {"S": [{"prefix": "MSG#"}]}}, "NewImage": {"translated_at": {"S": [{"exists": true}]}}}}`,
		`{"eventName": ["INSERT", "MODIFY"], "dynamodb": {"Keys": {"pk": {"S": [{"prefix": "ROOM#"}]}, "sk": {"S": ["#META", {"prefix": "GUEST#"}]}}}}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		record string
		want   bool
	}{
		{`{"eventName": "INSERT", "dynamodb": {"Keys": {"pk": {"S": "CHAN#1"}, "sk": {"S": "MSG#1"}}}}`, true},
		{`{"eventName": "REMOVE", "dynamodb": {"Keys": {"pk": {"S": "CHAN#1"}, "sk": {"S": "MSG#1"}}}}`, false},
		{`{"eventName": "MODIFY", "dynamodb": {"Keys": {"pk": {"S": "CHAN#1"}, "sk": {"S": "MSG#1"}}, "NewImage": {"translated_at": {"S": "2026"}}}}`, true},
		{`{"eventName": "MODIFY", "dynamodb": {"Keys": {"pk": {"S": "CHAN#1"}, "sk": {"S": "MSG#1"}}, "NewImage": {"content": {"S": "x"}}}}`, false},
		{`{"eventName": "MODIFY", "dynamodb": {"Keys": {"pk": {"S": "ROOM#1"}, "sk": {"S": "#META"}}}}`, true},
		{`{"eventName": "INSERT", "dynamodb": {"Keys": {"pk": {"S": "ROOM#1"}, "sk": {"S": "GUEST#2"}}}}`, true},
		{`{"eventName": "INSERT", "dynamodb": {"Keys": {"pk": {"S": "ROOM#1"}, "sk": {"S": "SEAT#2"}}}}`, false},
		{`{"eventName": "INSERT", "dynamodb": {"Keys": {"pk": {"S": "WS#1"}, "sk": {"S": "#META"}}}}`, false},
	} {
		var doc map[string]any
		if err := json.Unmarshal([]byte(tc.record), &doc); err != nil {
			t.Fatal(err)
		}
		if got := f.pass(doc); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.record, got, tc.want)
		}
	}
	if _, err := newFilter([]string{`{"eventName": [{"anything-but": ["REMOVE"]}]}`}); err == nil {
		t.Errorf("anything-but: got no error, want it refused as not emulated")
	}
}
