package events_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/events"
)

// TestScrub: every event type that carries a message comes out of Scrub as
// the same event (id, type, created_at, workspace, a room event's room)
// with the message as {id, workspace_id, channel_id, deleted, deleted_at}
// and nothing of its content, original or translated; scrubbing again
// changes nothing; other types are left as they are.
func TestScrub(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 123_000_000, time.UTC)
	deleted := time.Date(2026, 11, 22, 10, 2, 0, 0, time.UTC)
	m := events.MessageOf(message("secret <plan> \u2028"))
	m.Translations = map[string]string{"en": "translated secret"}
	room := events.RoomOf(chat.Room{ID: "01JD0000000000000000000009", Name: "Desk <1>"}, at, at)
	data := map[string]any{
		events.MessageCreated: m, events.MessageUpdated: &m, events.MessageTranslated: m,
		events.RoomMessageCreated: events.RoomMessage{Room: room, Message: m}, events.RoomMessageUpdated: &events.RoomMessage{Room: room, Message: m},
	}
	for _, typ := range events.Types {
		d, carries := data[typ]
		if carries != events.CarriesMessage(typ) {
			t.Fatalf("CarriesMessage(%s) = %v, want %v", typ, !carries, carries)
		}
		if !carries {
			d = events.WebhookRef{WebhookID: "x"}
		}
		ev := events.Event{ID: events.DeriveID(at, typ), Type: typ, WorkspaceID: m.WorkspaceID, CreatedAt: at, Data: d}
		body, err := events.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		ref, ok := events.MessageRefOf(body)
		if evRef, evOK := ev.MessageOf(); ok != carries || evOK != carries || (carries && (ref.ID != m.ID || ref.ChannelID != m.ChannelID || ref.Deleted || evRef.ID != m.ID)) {
			t.Fatalf("%s: MessageRefOf %+v %v, Event.MessageOf %+v %v", typ, ref, ok, evRef, evOK)
		}
		out, err := events.Scrub(body, deleted)
		if err != nil {
			t.Fatal(err)
		}
		if !carries {
			if string(out) != string(body) {
				t.Fatalf("%s scrubbed to %s, want it unchanged", typ, out)
			}
			continue
		}
		if strings.Contains(string(out), "secret") || strings.Contains(string(out), "author") {
			t.Fatalf("%s scrubbed still carries the message: %s", typ, out)
		}
		var env struct {
			ID, Type    string
			WorkspaceID string `json:"workspace_id"`
			CreatedAt   string `json:"created_at"`
			Data        json.RawMessage
		}
		if err := json.Unmarshal(out, &env); err != nil {
			t.Fatal(err)
		}
		if env.ID != ev.ID || env.Type != typ || env.CreatedAt != "2026-11-22T10:00:00.123Z" || env.WorkspaceID != m.WorkspaceID {
			t.Fatalf("%s scrubbed envelope %s, want the same id, type, time and workspace", typ, out)
		}
		msg := env.Data
		if strings.HasPrefix(typ, "room.") {
			var rd struct {
				Room    events.Room
				Message json.RawMessage
			}
			if err := json.Unmarshal(env.Data, &rd); err != nil || rd.Room != room {
				t.Fatalf("%s scrubbed room %+v (%v), want %+v", typ, rd.Room, err, room)
			}
			msg = rd.Message
		}
		want := `{"id":"` + m.ID + `","workspace_id":"` + m.WorkspaceID + `","channel_id":"` + m.ChannelID + `","deleted":true,"deleted_at":"2026-11-22T10:02:00Z"}`
		if string(msg) != want {
			t.Fatalf("%s scrubbed message %s, want %s", typ, msg, want)
		}
		if again, err := events.Scrub(out, deleted); err != nil || string(again) != string(out) {
			t.Fatalf("%s scrubbed twice: %s %v, want %s", typ, again, err, out)
		}
		if ref, ok := events.MessageRefOf(out); !ok || !ref.Deleted || ref.ID != m.ID {
			t.Fatalf("%s: MessageRefOf the scrubbed %+v %v, want deleted %s", typ, ref, ok, m.ID)
		}
	}
	if _, err := events.Scrub([]byte(`{"type":"message.created","data":"x"}`), deleted); err == nil {
		t.Fatal("Scrub of a malformed envelope: got nil error")
	}
}
