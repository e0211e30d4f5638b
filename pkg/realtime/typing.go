package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/chatbridge/chat/pkg/chat"
)

// Typist relays typing signals (contract section 12): a subscribed
// connection's {"action": "typing"} becomes {"type": "typing", "author":
// ...} on every other reader's connections of the channel.
type Typist struct {
	Typing TypingStore
	Store  ConnectionStore
	Sender Sender
	Now    chat.Clock
}

// typingFrame is the push of a typing signal.
type typingFrame struct {
	Type   string       `json:"type"`
	Author typingAuthor `json:"author"`
}

type typingAuthor struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Signal relays one typing signal of connection connectionID. It is never
// stored as a signal: the one write is the connection's last-signal time
// (TypingStore.TypingConnection), which both finds the connection's channel
// and author and drops the signal when the connection signalled less than
// TypingEvery ago or is not subscribed (nothing further is called: a flood
// costs one conditional write a message). Then one Query of the channel's
// connections, and one push to each connection still entitled (Entitled)
// that is not the author's own. The sender is never answered, and errors
// are only logged: a typing signal is not worth a retry.
func (t *Typist) Signal(ctx context.Context, connectionID string) {
	if !ValidConnectionID(connectionID) {
		return
	}
	now := t.Now().UTC()
	from, ok, err := t.Typing.TypingConnection(ctx, connectionID, now, TypingEvery)
	if err != nil {
		slog.WarnContext(ctx, "realtime: typing", "connection", connectionID, "error", err.Error())
		return
	}
	if !ok {
		return
	}
	conns, err := t.Store.Connections(ctx, from.ChannelID, now)
	if err != nil {
		slog.WarnContext(ctx, "realtime: typing: connections", "channel", from.ChannelID, "error", err.Error())
		return
	}
	// The author's own connection must still be entitled, as it is read now.
	var readers []Connection
	authorOK := false
	for _, c := range conns {
		ok, _ := c.Entitled(now)
		switch {
		case !ok:
		case c.ID == from.ID:
			authorOK = true
		case c.Kind == from.Kind && c.SubjectID == from.SubjectID:
			// the author's other connections: never echoed
		default:
			readers = append(readers, c)
		}
	}
	if !authorOK {
		return
	}
	b, _ := json.Marshal(typingFrame{Type: "typing", Author: typingAuthor{Type: from.Kind, ID: from.SubjectID, Name: from.Name}})
	for _, c := range readers {
		if err := t.Sender.Send(ctx, c.ID, b); err != nil && !errors.Is(err, ErrGone) {
			slog.WarnContext(ctx, "realtime: typing push", "connection", c.ID, "error", err.Error())
		}
	}
}
