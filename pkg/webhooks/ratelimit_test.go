package webhooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
	"github.com/chatbridge/chat/pkg/webhooks"
)

// TestRateLimitField: rate_limit is an integer from 1 to 1000 or null, on
// create and on change; null (or leaving it out of a create) is none.
func TestRateLimitField(t *testing.T) {
	base := `"name":"a","url":"https://a.example.invalid/"`
	for _, tc := range []struct {
		body string
		want int // -1: a 422 on rate_limit
	}{
		{`{` + base + `}`, 0}, {`{` + base + `,"rate_limit":null}`, 0}, {`{` + base + `,"rate_limit":1}`, 1},
		{`{` + base + `,"rate_limit":1000}`, 1000}, {`{` + base + `,"rate_limit":0}`, -1}, {`{` + base + `,"rate_limit":1001}`, -1},
		{`{` + base + `,"rate_limit":-5}`, -1}, {`{` + base + `,"rate_limit":2.5}`, -1}, {`{` + base + `,"rate_limit":"10"}`, -1},
		{`{` + base + `,"rate_limit":1e2}`, -1}, {`{` + base + `,"rate_limit":true}`, -1},
	} {
		var stored webhooks.Webhook
		s := &webhooks.Service{IDs: chat.NewIDs(), Now: time.Now, Store: fakeStore{create: func(w webhooks.Webhook, _ webhooks.AuditEvent) error {
			stored = w
			return nil
		}}}
		obj, err := jsonbody.ParseObject([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = s.Create(context.Background(), admin, webhooks.Support, obj)
		if tc.want < 0 {
			if e, ok := err.(*chat.Error); !ok || len(e.Fields["rate_limit"]) == 0 {
				t.Errorf("%s: got %v, want a 422 on rate_limit", tc.body, err)
			}
			continue
		}
		if err != nil || stored.RateLimit != tc.want {
			t.Errorf("%s: got %d, %v, want %d", tc.body, stored.RateLimit, err, tc.want)
		}
	}
	// A change sets it, and null clears it, each naming the field.
	old := webhooks.Webhook{Kind: webhooks.Outbound, ID: "01JD9N15ZR836GD73VZ533YQJJ", WorkspaceID: admin.WorkspaceID, Name: "a",
		URL: "https://a.example.invalid/", Events: []string{"room.closed"}, Active: true}
	for _, tc := range []struct {
		from int
		body string
		want int
	}{{0, `{"rate_limit":50}`, 50}, {50, `{"rate_limit":null}`, 0}} {
		old.RateLimit = tc.from
		var changes []string
		s := &webhooks.Service{IDs: chat.NewIDs(), Now: time.Now, Store: fakeStore{update: func(_, next webhooks.Webhook, ev webhooks.AuditEvent) error {
			changes = ev.Changes
			return nil
		}}}
		obj, _ := jsonbody.ParseObject([]byte(tc.body))
		got, err := s.Change(context.Background(), admin, old, obj)
		if err != nil || got.RateLimit != tc.want || len(changes) != 1 || changes[0] != "rate_limit" {
			t.Errorf("%s from %d: got %d (changes %v), %v, want %d with rate_limit changed", tc.body, tc.from, got.RateLimit, changes, err, tc.want)
		}
	}
}
