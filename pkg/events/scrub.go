package events

import (
	"encoding/json"
	"fmt"
	"time"
)

// Deleted means gone (contract section 13): from a deletion on, an event
// that carried the message is sent, served and stored with the message
// scrubbed to Scrubbed, never with its content or translations.

// CarriesMessage reports whether events of type t carry a message's
// content: the message events but message.deleted, and their room twins.
func CarriesMessage(t string) bool {
	switch t {
	case MessageCreated, MessageUpdated, MessageTranslated, RoomMessageCreated, RoomMessageUpdated:
		return true
	}
	return false
}

// Scrubbed is a deleted message as an event that carried it is sent
// after the deletion: no author, content, language or translations.
type Scrubbed struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	ChannelID   string `json:"channel_id"`
	Deleted     bool   `json:"deleted"`
	DeletedAt   string `json:"deleted_at"`
}

// MessageRef names the message an envelope carries.
type MessageRef struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	ChannelID   string `json:"channel_id"`
	// Deleted reports the envelope carries it scrubbed already.
	Deleted bool `json:"deleted"`
}

// MessageOf returns the message ev carries (CarriesMessage), and false for
// an event that carries none.
func (ev Event) MessageOf() (MessageRef, bool) {
	if !CarriesMessage(ev.Type) {
		return MessageRef{}, false
	}
	var m Message
	switch d := ev.Data.(type) {
	case Message:
		m = d
	case *Message:
		m = *d
	case RoomMessage:
		m = d.Message
	case *RoomMessage:
		m = d.Message
	default:
		return MessageRef{}, false
	}
	return MessageRef{ID: m.ID, WorkspaceID: m.WorkspaceID, ChannelID: m.ChannelID}, m.ID != "" && m.ChannelID != ""
}

// rawEnvelope is an envelope with its fields kept as sent.
type rawEnvelope struct {
	ID          json.RawMessage `json:"id"`
	Type        string          `json:"type"`
	CreatedAt   json.RawMessage `json:"created_at"`
	WorkspaceID json.RawMessage `json:"workspace_id"`
	Data        json.RawMessage `json:"data"`
}

// roomData is the data of the room events that carry a message.
type roomData struct {
	Room    json.RawMessage `json:"room"`
	Message json.RawMessage `json:"message"`
}

func (e rawEnvelope) message() (json.RawMessage, *roomData, error) {
	switch e.Type {
	case RoomMessageCreated, RoomMessageUpdated:
		var rd roomData
		if err := json.Unmarshal(e.Data, &rd); err != nil {
			return nil, nil, err
		}
		return rd.Message, &rd, nil
	}
	return e.Data, nil, nil
}

// MessageRefOf returns the message the envelope body carries, and false
// when its type carries none or it cannot be read.
func MessageRefOf(body []byte) (MessageRef, bool) {
	var e rawEnvelope
	if err := json.Unmarshal(body, &e); err != nil || !CarriesMessage(e.Type) {
		return MessageRef{}, false
	}
	raw, _, err := e.message()
	var ref MessageRef
	if err != nil || json.Unmarshal(raw, &ref) != nil || ref.ID == "" || ref.ChannelID == "" {
		return MessageRef{}, false
	}
	return ref, true
}

// Scrub returns the envelope body with the message it carries replaced by
// Scrubbed, deleted at deletedAt: its id, type, created_at and workspace
// (and a room event's room) as they were, so that it is the same event,
// sent again without content. A body whose type carries no message is
// returned as it is. Errors: a body that is not an envelope.
func Scrub(body []byte, deletedAt time.Time) ([]byte, error) {
	var e rawEnvelope
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("events: scrub: %w", err)
	}
	if !CarriesMessage(e.Type) {
		return body, nil
	}
	raw, room, err := e.message()
	var ref MessageRef
	if err == nil {
		err = json.Unmarshal(raw, &ref)
	}
	if err != nil {
		return nil, fmt.Errorf("events: scrub %s: %w", e.Type, err)
	}
	s, err := json.Marshal(Scrubbed{ID: ref.ID, WorkspaceID: ref.WorkspaceID, ChannelID: ref.ChannelID, Deleted: true, DeletedAt: stamp(deletedAt)})
	if err != nil {
		return nil, fmt.Errorf("events: scrub %s: %w", e.Type, err)
	}
	e.Data = s
	if room != nil {
		room.Message = s
		if e.Data, err = json.Marshal(room); err != nil {
			return nil, fmt.Errorf("events: scrub %s: %w", e.Type, err)
		}
	}
	out, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("events: scrub %s: %w", e.Type, err)
	}
	return queueSafe(out), nil
}
