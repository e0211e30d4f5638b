package delivery_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/events"
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

// lagStore is a recovery's store whose list lags its records: it lists
// each failed delivery with the attempts it had, while the record has
// more by the claim; a claim of a pending record is refused.
type lagStore struct {
	listed   []delivery.Record
	records  map[string]int // id → attempts; absent: pending
	released []delivery.Record
}

func (s *lagStore) FailedDeliveries(context.Context, string, string, time.Time, time.Time, int) ([]delivery.Record, error) {
	return s.listed, nil
}

func (s *lagStore) ClaimFailed(_ context.Context, rec delivery.Record, _ time.Time) (int, bool, error) {
	n, ok := s.records[rec.ID]
	delete(s.records, rec.ID)
	return n, ok, nil
}

func (s *lagStore) ReleaseClaim(_ context.Context, rec delivery.Record) error {
	s.released = append(s.released, rec)
	return nil
}

// sendQueue sends what it is given, or, down, nothing.
type sendQueue struct {
	sent []events.Delivery
	down bool
}

func (q *sendQueue) SendDeliveries(_ context.Context, ds []events.Delivery) ([]int, error) {
	if q.down {
		var all []int
		for i := range ds {
			all = append(all, i)
		}
		return all, errors.New("down")
	}
	q.sent = append(q.sent, ds...)
	return nil, nil
}

// TestRecoverTakesTheClaimedAttempts: a listed delivery whose record has
// failed again since (the list lags) is queued after the record's
// attempts, not the list's, and released with them; one taken up
// meanwhile is not queued; a test never is.
func TestRecoverTakesTheClaimedAttempts(t *testing.T) {
	const a, b, c = "01JDA0000000000000000000DA", "01JDA0000000000000000000DB", "01JDA0000000000000000000DC"
	listed := []delivery.Record{
		{ID: a, Kind: events.KindOutbound, EventType: events.MessageCreated, Attempts: 3},
		{ID: b, Kind: events.KindOutbound, EventType: events.MessageCreated, Attempts: 1},
		{ID: c, Kind: events.KindOutbound, EventType: events.WebhookTest, Attempts: 1},
	}
	now := func() time.Time { return time.Unix(1_800_000_000, 0) }
	for _, down := range []bool{false, true} {
		store := &lagStore{listed: listed, records: map[string]int{a: 4, c: 1}}
		q := &sendQueue{down: down}
		n, err := (&delivery.Recoverer{Store: store, Queue: q, Now: now}).Recover(context.Background(), "ws", events.KindOutbound, "wh", now().Add(-time.Hour), now())
		if down {
			if err == nil || n != 0 || len(store.released) != 1 || store.released[0].ID != a || store.released[0].Attempts != 4 {
				t.Fatalf("queue down: %d %v, released %+v; want an error and %s released after 4 attempts", n, err, store.released, a)
			}
			continue
		}
		if err != nil || n != 1 || len(q.sent) != 1 || q.sent[0].ID != a || q.sent[0].AttemptBase != 4 {
			t.Fatalf("recovered %d %+v %v; want %s queued after the record's 4 attempts", n, q.sent, err, a)
		}
	}
}
