package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

// ChangeKind says what a stream record changed.
type ChangeKind int

// Kinds of changes the push acts on.
const (
	// MessageStored: a message was inserted.
	MessageStored ChangeKind = iota + 1
	// MessageChanged: a message was modified (its translations may have
	// landed); Before is the message before the change.
	MessageChanged
	// RoomClosed: a room of the channel was closed.
	RoomClosed
)

// Change is one stream record the push acts on.
type Change struct {
	Kind    ChangeKind
	Message chat.Message
	Before  chat.Message
	// ChannelID and RoomID name the closed room (RoomClosed).
	ChannelID string
	RoomID    string
}

func (c Change) channel() string {
	if c.Kind == RoomClosed {
		return c.ChannelID
	}
	return c.Message.ChannelID
}

// TranslationReader reads stored translations (rooms.MessageReader's).
type TranslationReader interface {
	Translations(ctx context.Context, messageIDs, languages []string) (map[string]map[string]string, error)
}

// Pusher sends each subscribed connection what a change means to its
// reader, in the reader's language.
type Pusher struct {
	Store        ConnectionStore
	Translations TranslationReader
	Sender       Sender
	// Encode renders a view as the API shows it (httpapi.EncodeMessageView),
	// so a push is exactly what GET .../messages returns.
	Encode func(rooms.MessageView) ([]byte, error)
	Now    chat.Clock
}

// Push frames of the contract.
type frame struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data,omitempty"`
	ID   string          `json:"id,omitempty"`
}

// Push acts on one change: it Queries the channel's connections once (with
// what ends their access: see Entitled), reads
// one translation per distinct language its readers see (one batch read),
// builds one view per distinct reader language, and sends it to each
// connection that should see it. A connection that is gone loses its item;
// a send that fails otherwise is logged and not retried (the client reads
// the message over HTTP, and a retry would push twice to the others).
// Errors: those of the store and translation reads, when nothing was sent.
func (p *Pusher) Push(ctx context.Context, c Change) error {
	conns, err := p.Store.Connections(ctx, c.channel(), p.Now().UTC())
	if err != nil || len(conns) == 0 {
		return err
	}
	// Only connections still entitled (access.go), and not reading or sent
	// c by their backfill (backfill.go), are pushed to.
	conns = p.hold(ctx, c, p.entitled(ctx, conns))
	switch c.Kind {
	case RoomClosed:
		closed, _ := json.Marshal(frame{Type: "room.closed"})
		for _, conn := range conns {
			if conn.Kind != KindGuest || conn.RoomID != c.RoomID {
				continue
			}
			p.send(ctx, conn, closed)
			if err := p.Sender.Close(ctx, conn.ID); err != nil {
				slog.WarnContext(ctx, "realtime: close connection", "connection", conn.ID, "error", err.Error())
			}
			if err := p.Store.DeleteConnection(ctx, conn.ChannelID, conn.ID); err != nil {
				slog.WarnContext(ctx, "realtime: delete connection", "connection", conn.ID, "error", err.Error())
			}
		}
		return nil
	case MessageStored, MessageChanged:
		return p.pushMessage(ctx, c, conns)
	}
	return nil
}

func (p *Pusher) pushMessage(ctx context.Context, c Change, conns []Connection) error {
	m := c.Message
	typ := "message"
	if c.Kind == MessageChanged {
		typ = "message.updated"
	}
	// lang is, per reader language tag, the translation it sees ("" for the
	// original); only tags whose view is new this change get a push.
	lang := map[string]string{}
	for _, conn := range conns {
		tag := conn.Language
		if _, done := lang[tag]; done {
			continue
		}
		now, ok := rooms.TranslationLanguage(m, tag)
		if c.Kind == MessageStored {
			lang[tag] = now
			continue
		}
		before, had := rooms.TranslationLanguage(c.Before, tag)
		if !ok || (had && before == now) {
			lang[tag] = "-" // nothing new for this reader
			continue
		}
		lang[tag] = now
	}
	var ids, langs []string
	for _, l := range lang {
		if l != "" && l != "-" && !slices.Contains(langs, l) {
			ids, langs = append(ids, m.ID), append(langs, l)
		}
	}
	var trs map[string]map[string]string
	if len(langs) > 0 {
		var err error
		if trs, err = p.Translations.Translations(ctx, ids, langs); err != nil {
			return err
		}
	}
	payloads := map[string][]byte{}
	for tag, l := range lang {
		if l == "-" {
			continue
		}
		view := rooms.ViewOf(m, trs[m.ID], tag)
		if c.Kind == MessageChanged && !view.Translated {
			continue // the translation is not readable yet: no update
		}
		b, err := p.payload(typ, view)
		if err != nil {
			return err
		}
		payloads[tag] = b
	}
	for _, conn := range conns {
		if b, ok := payloads[conn.Language]; ok {
			p.send(ctx, conn, b)
		}
	}
	return nil
}

// payload is the push of view, or, past MaxMessageBytes, a notice naming
// the message that the client reads over HTTP instead.
func (p *Pusher) payload(typ string, view rooms.MessageView) ([]byte, error) {
	data, err := p.Encode(view)
	if err != nil {
		return nil, chat.Internal(err)
	}
	b, err := json.Marshal(frame{Type: typ, Data: data})
	if err != nil {
		return nil, chat.Internal(err)
	}
	if len(b) > MaxMessageBytes {
		return json.Marshal(frame{Type: "message.too_large", ID: view.Message.ID})
	}
	return b, nil
}

func (p *Pusher) send(ctx context.Context, conn Connection, b []byte) {
	err := p.Sender.Send(ctx, conn.ID, b)
	switch {
	case err == nil:
	case errors.Is(err, ErrGone):
		if err := p.Store.DeleteConnection(ctx, conn.ChannelID, conn.ID); err != nil {
			slog.WarnContext(ctx, "realtime: delete gone connection", "connection", conn.ID, "error", err.Error())
		}
	default:
		slog.WarnContext(ctx, "realtime: push", "connection", conn.ID, "error", err.Error())
	}
}
