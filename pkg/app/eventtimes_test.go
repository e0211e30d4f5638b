package app_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/events"
)

// TestRoomEventsOrderedToTheMillisecond: a room created, joined and closed
// in quick succession (the same second, as the red team's were) reaches a
// webhook as three events whose ids and created_at sort in the order of
// the changes, created_at to the millisecond; a redelivery sends the very
// envelope again, id and all. Before, room.closed was timed by its stream
// record, cut to the second, so its id sorted before room.created's, and
// created_at said the same second for all three.
func TestRoomEventsOrderedToTheMillisecond(t *testing.T) {
	w := newEventWorld(t, "1s")
	ms := regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$`)

	// From a second's start, so that the three changes share it.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	start := time.Now()
	rec := w.do(t, "POST", w.wsPath("/rooms"), `{"channel_id":"`+w.general+`","name":"Order help","expires_at":"`+
		chat.FormatTime(time.Now().Add(time.Hour))+`"}`, bearer(w.ben))
	if rec.Code != 201 {
		t.Fatalf("create room: %d %s", rec.Code, rec.Body)
	}
	room := decodeAs[struct{ Data roomBody }](t, rec.Body.Bytes()).Data.RoomID
	if rec = w.do(t, "POST", "/api/v1/external/rooms/"+room+"/guests", `{"nickname":"Marta","preferred_language":"es-ES"}`, nil); rec.Code != 201 {
		t.Fatalf("join: %d %s", rec.Code, rec.Body)
	}
	if rec = w.do(t, "POST", w.wsPath("/rooms/"+room+"/close"), "", bearer(w.ana)); rec.Code != 200 {
		t.Fatalf("close: %d %s", rec.Code, rec.Body)
	}
	t.Logf("the three changes took %v from %v", time.Since(start), start.Format(time.RFC3339Nano))

	w.relayStream(t)
	order := []string{events.RoomCreated, events.RoomGuestJoined, events.RoomClosed}
	byType := func() map[string][]delivered {
		out := map[string][]delivered{}
		for _, d := range w.rv.of("/out", room) {
			out[d.eventType()] = append(out[d.eventType()], d)
		}
		return out
	}
	w.deliver(t, func() bool { return len(byType()) == len(order) })
	got := byType()
	var ids, times []string
	for _, typ := range order {
		if len(got[typ]) != 1 {
			t.Fatalf("%s: %d deliveries, want 1", typ, len(got[typ]))
		}
		env := got[typ][0].envelope(t)
		if !ms.MatchString(env.CreatedAt) {
			t.Fatalf("%s created_at %q, want RFC 3339 with three digits of milliseconds", typ, env.CreatedAt)
		}
		at, _ := time.Parse(time.RFC3339Nano, env.CreatedAt)
		if idAt, ok := events.IDTime(env.ID); !ok || !idAt.Equal(at) {
			t.Fatalf("%s: id %s is timed %v, created_at %s; want the same moment", typ, env.ID, idAt, env.CreatedAt)
		}
		ids, times = append(ids, env.ID), append(times, env.CreatedAt)
	}
	for i := 1; i < len(order); i++ {
		if ids[i-1] >= ids[i] || times[i-1] >= times[i] {
			t.Fatalf("%s (%s, %s) does not sort before %s (%s, %s)", order[i-1], ids[i-1], times[i-1], order[i], ids[i], times[i])
		}
	}

	// A redelivery of room.closed: the same envelope, its id unchanged.
	closed := got[events.RoomClosed][0]
	path := w.wsPath("/outbound-webhooks/" + w.out + "/deliveries/" + closed.header.Get("X-Service-Delivery") + "/redeliver")
	if rec = w.do(t, "POST", path, "", bearer(w.ana)); rec.Code != 202 {
		t.Fatalf("redeliver: %d %s", rec.Code, rec.Body)
	}
	w.deliver(t, func() bool { return len(byType()[events.RoomClosed]) == 2 })
	again := byType()[events.RoomClosed][1]
	if again.envelope(t).ID != ids[2] || string(again.body) != string(closed.body) || again.header.Get("X-Service-Attempt") != "2" {
		t.Fatalf("redelivered room.closed (attempt %s) %s, want attempt 2 of the first envelope %s", again.header.Get("X-Service-Attempt"), again.body, closed.body)
	}
}
