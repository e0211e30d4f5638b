package realtime

import (
	"context"
	"encoding/json"

	"github.com/chatbridge/chat/pkg/rooms"
)

// Kinds of changes of contract section 13.
const (
	// MessageEdited: a message's content was edited (a new revision); every
	// reader gets the new original until its translation lands (a later
	// MessageChanged).
	MessageEdited ChangeKind = iota + 100
	// MessageDeleted: a message was deleted; every reader gets
	// {"type": "message.deleted", "data": {"id"}}.
	MessageDeleted
)

// editSends are the pushes of an edit: the new revision's view, in its
// original, to every connection (a translation of the earlier revision is
// never shown for the new content).
func (p *Pusher) editSends(ctx context.Context, c Change, conns []Connection, counts map[string]map[string]int) ([]send, error) {
	payloads := map[string][]byte{}
	var sends []send
	for _, conn := range conns {
		b, ok := payloads[conn.Language]
		if !ok {
			// An edit keeps the reactions (Me false: see Pusher.Reactions).
			view, err := p.withCounts(ctx, rooms.ViewOf(c.Message, nil, conn.Language), counts)
			if err != nil {
				return nil, err
			}
			if b, err = p.payload("message.updated", view); err != nil {
				return nil, err
			}
			payloads[conn.Language] = b
		}
		sends = append(sends, send{conn: conn, data: b})
	}
	return sends, nil
}

// deletedFrame is the push of message id's deletion: its id alone.
func deletedFrame(id string) []byte {
	data, _ := json.Marshal(struct {
		ID string `json:"id"`
	}{id})
	b, _ := json.Marshal(frame{Type: "message.deleted", Data: data})
	return b
}

// deleteSends are the pushes of a deletion: the id, to every connection.
func deleteSends(c Change, conns []Connection) []send {
	b := deletedFrame(c.Message.ID)
	sends := make([]send, 0, len(conns))
	for _, conn := range conns {
		sends = append(sends, send{conn: conn, data: b})
	}
	return sends
}
