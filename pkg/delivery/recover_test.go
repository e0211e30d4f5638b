package delivery_test

import (
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/jsonbody"
)

func TestRecoverWindow(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		body         string
		field        string // "" = valid
		since, until time.Time
	}{
		{`{"since":"2026-11-25T10:00:00Z"}`, "", now.Add(-2 * time.Hour), now},
		{`{"since":"2026-11-25T10:00:00Z","until":"2026-11-25T11:00:00Z"}`, "", now.Add(-2 * time.Hour), now.Add(-time.Hour)},
		{`{"since":"2026-11-25T10:00:00Z","until":"2027-01-01T00:00:00Z"}`, "", now.Add(-2 * time.Hour), now},
		{`{"since":"2026-11-25T10:00:00Z","until":null}`, "", now.Add(-2 * time.Hour), now},
		{`{"since":"2026-10-26T12:00:00Z"}`, "", now.Add(-chat.DeliveryRetention), now},
		{`{}`, "since", time.Time{}, time.Time{}},
		{`{"since":null}`, "since", time.Time{}, time.Time{}},
		{`{"since":5}`, "since", time.Time{}, time.Time{}},
		{`{"since":"yesterday"}`, "since", time.Time{}, time.Time{}},
		{`{"since":"2026-10-26T11:59:59Z"}`, "since", time.Time{}, time.Time{}},
		{`{"since":"2026-11-26T00:00:00Z"}`, "since", time.Time{}, time.Time{}},
		{`{"since":"2026-11-25T10:00:00Z","until":"2026-11-25T09:00:00Z"}`, "until", time.Time{}, time.Time{}},
		{`{"since":"2026-11-25T10:00:00Z","until":"soon"}`, "until", time.Time{}, time.Time{}},
	} {
		obj, err := jsonbody.ParseObject([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		since, until, err := delivery.RecoverWindow(obj, now)
		if c.field == "" {
			if err != nil || !since.Equal(c.since) || !until.Equal(c.until) {
				t.Errorf("%s: got [%v, %v] %v, want [%v, %v]", c.body, since, until, err, c.since, c.until)
			}
			continue
		}
		if e, ok := err.(*chat.Error); !ok || e.Code != chat.EValidation || len(e.Fields[c.field]) == 0 {
			t.Errorf("%s: got %v, want a 422 on %s", c.body, err, c.field)
		}
	}
}
