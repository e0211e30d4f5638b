package realtime

import (
	"context"
	"encoding/json"
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
	// Concurrency bounds the pushes in flight (DefaultConcurrency when 0):
	// a signal reaches a big channel's readers within the function's
	// timeout, as a message's push does.
	Concurrency int
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
// that is not the author's own, at most Concurrency in flight, none
// started within a second of the context's deadline (Pusher's sends: a
// gone connection loses its item). The sender is never answered, and
// errors are only logged: a typing signal is not worth a retry; a signal
// not sent to every reader in time is logged with the count left.
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
	sends := make([]send, len(readers))
	for i, c := range readers {
		sends[i] = send{conn: c, data: b}
	}
	p := &Pusher{Store: t.Store, Sender: t.Sender, Concurrency: t.Concurrency}
	stop, cut := p.stopTimes(ctx)
	if err := p.sendAll(ctx, "", sends, stop, cut); err != nil {
		slog.WarnContext(ctx, "realtime: typing push", "channel", from.ChannelID, "error", err.Error())
	}
}
