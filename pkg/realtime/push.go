package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

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
	// Key names the change across retries (the stream record's event id),
	// for Pusher.Sent; "" for none.
	Key     string
	Kind    ChangeKind
	Message chat.Message
	Before  chat.Message
	// ChannelID and RoomID name the closed room (RoomClosed).
	ChannelID string
	RoomID    string
}

// changesView reports whether c changes a message some reader already
// holds: an edit, a deletion, or a modification that stored translations
// (others, such as the sweep's bookkeeping, change no view).
func (c Change) changesView() bool {
	switch c.Kind {
	case MessageEdited, MessageDeleted:
		return true
	case MessageChanged:
		return !sameLanguages(c.Message.TranslatedLanguages, c.Before.TranslatedLanguages)
	}
	return false
}

func sameLanguages(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, l := range a {
		if !slices.Contains(b, l) {
			return false
		}
	}
	return true
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
//
// It fits the function's timeout: sends go out concurrently (at most
// Concurrency in flight), none starts later than Reserve before the
// context's deadline, and sends still in flight at half the Reserve before
// it are cancelled. A change not sent to every connection by then is
// unfinished (ErrUnfinished) and must be retried; Sent, when set, lets the
// retry skip the connections already sent to.
type Pusher struct {
	Store        ConnectionStore
	Translations TranslationReader
	Sender       Sender
	// Encode renders a view as the API shows it (messageview.Encode),
	// so a push is exactly what GET .../messages returns.
	Encode func(chat.MessageView) ([]byte, error)
	Now    chat.Clock
	// Concurrency bounds the sends in flight (DefaultConcurrency when 0).
	Concurrency int
	// Reserve is the time kept before the context's deadline (DefaultReserve
	// when 0).
	Reserve time.Duration
	// Sent remembers the connections each unfinished change was sent to;
	// nil remembers nothing.
	Sent *Sent
	// Changes, when set, logs each change of a message's view for the
	// backfills of reconnecting readers (Push); nil logs nothing.
	Changes ChangeLog
}

// Defaults of a Pusher.
const (
	// DefaultConcurrency: 200 connections at 20 ms a PostToConnection take
	// 4 rounds, 80 ms, instead of 4 s one after the other.
	DefaultConcurrency = 50
	// DefaultReserve is the time kept to answer Lambda before the deadline.
	DefaultReserve = time.Second
)

// ErrUnfinished is returned by Push for a change it could not send to every
// connection before its stop time: retry it.
var ErrUnfinished = errors.New("realtime: push unfinished before the deadline")

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
// connection that should see it (skipping those Sent says already got it).
// A connection that is gone loses its item; a send that fails otherwise is
// logged and not retried (the client reads the message over HTTP, and a
// retry would push twice to the others). Errors: ErrUnfinished when the
// stop time came first (nothing is lost: retry the change); those of the
// store and translation reads, when nothing was sent.
func (p *Pusher) Push(ctx context.Context, c Change) error {
	stop, cut := p.stopTimes(ctx)
	if !stop.IsZero() && !time.Now().Before(stop) {
		return fmt.Errorf("%w: not started", ErrUnfinished)
	}
	// The change is logged before the audience is read: a reader who
	// subscribes later finds it in the log (backfill.go), one who
	// subscribed earlier is read here. Either way nothing is missed.
	if p.Changes != nil && c.changesView() {
		if err := p.Changes.LogChange(ctx, c.Message.ChannelID, c.Message.ID, p.Now().UTC()); err != nil {
			return err
		}
	}
	conns, err := p.Store.Connections(ctx, c.channel(), p.Now().UTC())
	if err != nil || len(conns) == 0 {
		return err
	}
	// Only connections still entitled (access.go), and not reading or sent
	// c by their backfill (backfill.go), are pushed to.
	conns = p.hold(ctx, c, p.entitled(ctx, conns))
	var sends []send
	switch c.Kind {
	case RoomClosed:
		closed, _ := json.Marshal(frame{Type: "room.closed"})
		for _, conn := range conns {
			if conn.Kind == KindGuest && conn.RoomID == c.RoomID {
				sends = append(sends, send{conn: conn, data: closed, close: true})
			}
		}
	case MessageStored, MessageChanged:
		if sends, err = p.messageSends(ctx, c, conns); err != nil {
			return err
		}
	case MessageEdited:
		if sends, err = p.editSends(c, conns); err != nil {
			return err
		}
	case MessageDeleted:
		sends = deleteSends(c, conns)
	}
	return p.sendAll(ctx, c.Key, sends, stop, cut)
}

// stopTimes are when to start no more sends and when to cancel those in
// flight: Reserve and half of it before ctx's deadline; zero without one.
func (p *Pusher) stopTimes(ctx context.Context) (stop, cut time.Time) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return time.Time{}, time.Time{}
	}
	reserve := p.Reserve
	if reserve <= 0 {
		reserve = DefaultReserve
	}
	return deadline.Add(-reserve), deadline.Add(-reserve / 2)
}

// send is one connection's push; close also closes the connection and
// deletes its item (a room closing).
type send struct {
	conn  Connection
	data  []byte
	close bool
}

// sendAll runs sends with at most Concurrency in flight, starting none
// after stop and cancelling those in flight at cut. It returns
// ErrUnfinished when some were not done; Sent remembers the done ones of
// an unfinished change, and forgets the change once it is finished.
func (p *Pusher) sendAll(ctx context.Context, key string, sends []send, stop, cut time.Time) error {
	if key == "" || p.Sent == nil {
		key = ""
	}
	sendCtx := ctx
	if !cut.IsZero() {
		var cancel context.CancelFunc
		sendCtx, cancel = context.WithDeadline(ctx, cut)
		defer cancel()
	}
	workers := p.Concurrency
	if workers <= 0 {
		workers = DefaultConcurrency
	}
	var (
		wg         sync.WaitGroup
		slots      = make(chan struct{}, workers)
		unfinished atomic.Int64
	)
	for _, s := range sends {
		if key != "" && p.Sent.has(key, s.conn.ID) {
			continue
		}
		slots <- struct{}{} // waits for a send in flight to end
		if !stop.IsZero() && !time.Now().Before(stop) {
			<-slots
			unfinished.Add(1)
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if !p.deliver(ctx, sendCtx, s) {
				unfinished.Add(1)
				return
			}
			if key != "" {
				p.Sent.mark(key, s.conn.ID)
			}
		}()
	}
	wg.Wait()
	if n := unfinished.Load(); n > 0 {
		return fmt.Errorf("%w: %d of %d connections left", ErrUnfinished, n, len(sends))
	}
	if key != "" {
		p.Sent.forget(key)
	}
	return nil
}

// deliver makes one send; false when it was cut off by the stop time (to
// be retried). A gone connection loses its item; another failure is logged
// and counts as done.
func (p *Pusher) deliver(ctx, sendCtx context.Context, s send) bool {
	err := p.Sender.Send(sendCtx, s.conn.ID, s.data)
	switch {
	case err == nil:
	case errors.Is(err, ErrGone):
		if err := p.Store.DeleteConnection(ctx, s.conn.ChannelID, s.conn.ID); err != nil {
			slog.WarnContext(ctx, "realtime: delete gone connection", "connection", s.conn.ID, "error", err.Error())
		}
		return true
	case sendCtx.Err() != nil:
		return false
	default:
		slog.WarnContext(ctx, "realtime: push", "connection", s.conn.ID, "error", err.Error())
	}
	if !s.close {
		return true
	}
	if err := p.Sender.Close(sendCtx, s.conn.ID); err != nil {
		if sendCtx.Err() != nil {
			return false
		}
		slog.WarnContext(ctx, "realtime: close connection", "connection", s.conn.ID, "error", err.Error())
	}
	if err := p.Store.DeleteConnection(ctx, s.conn.ChannelID, s.conn.ID); err != nil {
		slog.WarnContext(ctx, "realtime: delete connection", "connection", s.conn.ID, "error", err.Error())
	}
	return true
}

// messageSends are the pushes of a stored or changed message: one view per
// reader language whose view is new.
func (p *Pusher) messageSends(ctx context.Context, c Change, conns []Connection) ([]send, error) {
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
			return nil, err
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
			return nil, err
		}
		payloads[tag] = b
	}
	var sends []send
	for _, conn := range conns {
		if b, ok := payloads[conn.Language]; ok {
			sends = append(sends, send{conn: conn, data: b})
		}
	}
	return sends, nil
}

// payload is the push of view, or, past MaxMessageBytes, a notice naming
// the message that the client reads over HTTP instead.
func (p *Pusher) payload(typ string, view chat.MessageView) ([]byte, error) {
	return messageFrame(p.Encode, typ, view)
}
