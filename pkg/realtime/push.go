package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
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
	// Emoji are those whose count changed (ReactionCounted); Message then
	// has only its ID and ChannelID.
	Emoji []string
}

// changesView reports whether c changes a message some reader already
// holds: an edit, a deletion, or a modification that stored translations
// (others, such as the sweep's bookkeeping, change no view).
func (c Change) changesView() bool {
	switch c.Kind {
	case MessageEdited, MessageDeleted, ReactionCounted:
		// A reaction is logged too: a reconnecting reader's backfill then
		// sends the message's state, with the reader's own reactions.
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
	Translations(ctx context.Context, messageIDs, languages []string) (map[string]map[string]chat.Translation, error)
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
	// Jobs, when set, takes the sends of a change with more than
	// FanoutAbove of them, and those a push left (fanout.go); nil: a push
	// sends them all itself, and what it leaves is ErrUnfinished.
	Jobs JobQueue
	// FanoutAbove is DefaultFanoutAbove when 0.
	FanoutAbove int
	// JobConnections bounds a job's connections (MaxJobConnections when 0
	// or more).
	JobConnections int
	// Metrics, when set, counts throttled, failed, handed-off and dropped
	// sends.
	Metrics Metrics
	// Reactions reads reaction counts: the totals of reaction pushes, and
	// the reactions of pushed views (Me false: a view is shared by the
	// readers of a language, and clients keep their own Me from their
	// actions); nil pushes no reactions.
	Reactions ReactionCounter
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

// Push acts on one change, as PushAll does on a batch of one.
func (p *Pusher) Push(ctx context.Context, c Change) error {
	_, err := p.PushAll(ctx, []Change{c})
	return err
}

// PushAll acts on a stream batch's changes in order and returns how many
// were done (all of them, or those before the first that failed, whose
// error it returns). It first logs every change of a message's view for
// the backfills of reconnecting readers, then reads each channel's
// audience once, after that: a reader who subscribes later finds the
// changes in the log (backfill.go), one who subscribed earlier is read
// here, so nothing is missed, and a batch of many changes to one channel
// costs one Query, not one a change. Each change is then pushed as
// described at push.
func (p *Pusher) PushAll(ctx context.Context, changes []Change) (int, error) {
	stop, _ := p.stopTimes(ctx)
	if !stop.IsZero() && !time.Now().Before(stop) {
		return 0, fmt.Errorf("%w: not started", ErrUnfinished)
	}
	if p.Changes != nil {
		logged := map[string]bool{} // a batch's reactions log their message once
		for _, c := range changes {
			if !c.changesView() || (c.Kind == ReactionCounted && logged[c.Message.ID]) {
				continue
			}
			logged[c.Message.ID] = c.Kind == ReactionCounted
			if err := p.Changes.LogChange(ctx, c.Message.ChannelID, c.Message.ID, p.Now().UTC()); err != nil {
				return 0, err
			}
		}
	}
	audiences := map[string][]Connection{}
	// A batch reads each message's reaction counts once (counts), and
	// pushes each (message, emoji) whose count changed once, where the
	// first record that changed it stands: a burst of 1,000 reactions in
	// a batch is one push per emoji to each reader, of the total read then
	// (which the later records' writes are already in).
	counts := map[string]map[string]int{}
	pushed := map[[2]string]bool{}
	for i, c := range changes {
		conns, read := audiences[c.channel()]
		if !read {
			var err error
			if conns, err = p.Store.Connections(ctx, c.channel(), p.Now().UTC()); err != nil {
				return i, err
			}
			// Only connections still entitled (access.go) are pushed to;
			// the others are ended once.
			conns = p.entitled(ctx, conns)
			audiences[c.channel()] = conns
		}
		if c.Kind == ReactionCounted {
			for _, e := range c.Emoji {
				if pushed[[2]string{c.Message.ID, e}] {
					continue
				}
				one := c
				one.Emoji = []string{e}
				if c.Key != "" {
					// Sent tells each emoji's sends apart.
					one.Key = c.Key + "#" + e
				}
				if err := p.push(ctx, one, conns, counts); err != nil {
					return i, err
				}
				pushed[[2]string{c.Message.ID, e}] = true
			}
			continue
		}
		if err := p.push(ctx, c, conns, counts); err != nil {
			return i, err
		}
	}
	return len(changes), nil
}

// push acts on one change for its channel's connections conns (with
// what ends their access: see Entitled): it reads
// one translation per distinct language its readers see (one batch read),
// builds one view per distinct reader language, and sends it to each
// connection that should see it (skipping those Sent says already got it).
// A connection that is gone loses its item; a send that fails otherwise is
// logged and not retried (the client reads the message over HTTP, and a
// retry would push twice to the others). Errors: ErrUnfinished when the
// stop time came first (nothing is lost: retry the change); those of the
// store and translation reads, when nothing was sent.
func (p *Pusher) push(ctx context.Context, c Change, conns []Connection, counts map[string]map[string]int) error {
	stop, cut := p.stopTimes(ctx)
	if !stop.IsZero() && !time.Now().Before(stop) {
		return fmt.Errorf("%w: not started", ErrUnfinished)
	}
	if len(conns) == 0 {
		return nil
	}
	// Only connections not reading or sent c by their backfill
	// (backfill.go) are pushed to. A reaction's total is pushed to all:
	// a backfill shows the counts it read, and the push the newer total.
	if c.Kind != ReactionCounted {
		conns = p.hold(ctx, c, conns)
	}
	var sends []send
	var err error
	switch c.Kind {
	case RoomClosed:
		closed, _ := json.Marshal(frame{Type: "room.closed"})
		for _, conn := range conns {
			if conn.Kind == KindGuest && conn.RoomID == c.RoomID {
				sends = append(sends, send{conn: conn, data: closed, close: true})
			}
		}
	case MessageStored, MessageChanged:
		if sends, err = p.messageSends(ctx, c, conns, counts); err != nil {
			return err
		}
	case MessageEdited:
		if sends, err = p.editSends(ctx, c, conns, counts); err != nil {
			return err
		}
	case ReactionCounted:
		if sends, err = p.reactionSends(ctx, c, conns, counts); err != nil {
			return err
		}
	case MessageDeleted:
		sends = deleteSends(c, conns)
	}
	fanoutAbove := p.FanoutAbove
	if fanoutAbove <= 0 {
		fanoutAbove = DefaultFanoutAbove
	}
	if p.Jobs != nil && len(sends) > fanoutAbove {
		// A large audience: the fan-out workers send it, many at once.
		if c.Key != "" && p.Sent != nil {
			sends = slices.DeleteFunc(sends, func(s send) bool { return p.Sent.has(c.Key, s.conn.ID) })
		}
		err := p.handOff(ctx, c.Key, sends, 0)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, ErrJobTooLarge):
			return err
		}
		// A payload too large to queue: sent here, as a small audience's.
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

// sendAll runs sends as sendEach does. What is left is handed to the
// fan-out workers when the Pusher has Jobs (after a second when some were
// throttled); without Jobs, or when that fails, it returns ErrUnfinished,
// and Sent remembers the done ones of the unfinished change.
func (p *Pusher) sendAll(ctx context.Context, key string, sends []send, stop, cut time.Time) error {
	left := p.sendEach(ctx, key, sends, stop, cut)
	if len(left) == 0 {
		return nil
	}
	if p.Jobs != nil {
		err := p.handOff(context.WithoutCancel(ctx), key, left, time.Second)
		if err == nil {
			return nil
		}
		slog.WarnContext(ctx, "realtime: hand off the sends left", "error", err.Error())
	}
	return fmt.Errorf("%w: %d of %d connections left", ErrUnfinished, len(left), len(sends))
}

// sendEach runs sends with at most Concurrency in flight, starting none
// after stop and cancelling those in flight at cut, and returns those not
// done (not started, cut off, or throttled). Sent (with key) remembers the
// done ones of an unfinished change and forgets a finished one.
func (p *Pusher) sendEach(ctx context.Context, key string, sends []send, stop, cut time.Time) []send {
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
		wg    sync.WaitGroup
		slots = make(chan struct{}, workers)
		mu    sync.Mutex
		left  []send
	)
	leave := func(s send) {
		mu.Lock()
		left = append(left, s)
		mu.Unlock()
	}
	for _, s := range sends {
		if key != "" && p.Sent.has(key, s.conn.ID) {
			continue
		}
		slots <- struct{}{} // waits for a send in flight to end
		if !stop.IsZero() && !time.Now().Before(stop) {
			<-slots
			leave(s)
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if !p.deliver(ctx, sendCtx, s) {
				leave(s)
				return
			}
			if key != "" {
				p.Sent.mark(key, s.conn.ID)
			}
		}()
	}
	wg.Wait()
	if len(left) == 0 && key != "" {
		p.Sent.forget(key)
	}
	return left
}

// deliver makes one send; false when it was cut off by the stop time or
// throttled (to be retried). A gone connection loses its item. Another
// failure is counted (MetricFailed) and ends the connection, so that its
// client reconnects with since and the backfill restores the push; it
// counts as done.
func (p *Pusher) deliver(ctx, sendCtx context.Context, s send) bool {
	err := p.Sender.Send(sendCtx, s.conn.ID, s.data)
	switch {
	case err == nil:
	case errors.Is(err, ErrGone):
		if err := p.Store.DeleteConnection(ctx, s.conn.ChannelID, s.conn.ID); err != nil {
			p.logWarn(ctx, "realtime: delete gone connection", s.conn.ID, err)
		}
		return true
	case sendCtx.Err() != nil:
		return false
	case errors.Is(err, ErrThrottled):
		p.count(ctx, MetricThrottled, 1)
		return false
	default:
		p.count(ctx, MetricFailed, 1)
		p.logWarn(ctx, "realtime: push failed; the connection is closed for its client to reconnect", s.conn.ID, err)
		s.close = true
	}
	if !s.close {
		return true
	}
	if err := p.Sender.Close(sendCtx, s.conn.ID); err != nil {
		if sendCtx.Err() != nil {
			return false
		}
		p.logWarn(ctx, "realtime: close connection", s.conn.ID, err)
	}
	if err := p.Store.DeleteConnection(ctx, s.conn.ChannelID, s.conn.ID); err != nil {
		p.logWarn(ctx, "realtime: delete connection", s.conn.ID, err)
	}
	return true
}

func (p *Pusher) logWarn(ctx context.Context, msg, connection string, err error) {
	slog.WarnContext(ctx, msg, "connection", connection, "error", err.Error())
}

// messageSends are the pushes of a stored or changed message: one view per
// reader language whose view is new.
func (p *Pusher) messageSends(ctx context.Context, c Change, conns []Connection, counts map[string]map[string]int) ([]send, error) {
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
	var trs map[string]map[string]chat.Translation
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
		var err error
		view := rooms.ViewOf(m, trs[m.ID], tag)
		if c.Kind == MessageChanged && !view.ShowsTranslation() {
			continue // the translation is not readable yet: no update
		}
		if view, err = p.withCounts(ctx, view, counts); err != nil {
			return nil, err
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
