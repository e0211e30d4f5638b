package realtime

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

// RecentWindow is how long after a message is stored its live push may
// still be on its way (the stream's lag, a retried batch): a backfill
// records on the connection the ids of the messages it sent that are this
// recent, and the push skips them for that connection.
const RecentWindow = time.Minute

// backfill registers c as pending, then reads and renders what came after
// since; Ready ends it.
//
// The join of backfill and live pushes, exact: c is stored (pending)
// before the backfill is read, so every message stored later has its push
// read c; a push that finds c pending does not send but holds the message
// on c's item (Holder, one conditional write). The route sends the
// backfill, then "subscribed", then Ready (one write) stops the holding,
// records the recent ids the backfill sent (a later push skips them) and
// returns what was held: each held message the backfill did not hold is
// sent then, as a live push. A push that meets c no longer pending sends
// as usual. So every message reaches the client once, and the backfill
// comes before "subscribed".
//
// Calls beyond the subscribe's: one Query, at most two BatchGetItem (the
// reader's translations, 100 keys each), one UpdateItem (Ready); only
// when a message landed during the backfill, one BatchGetItem more for it
// (and one for its translation).
func (s *Subscriber) backfill(ctx context.Context, c Connection, since string) (Subscribed, error) {
	c.Pending = true
	if err := s.Store.PutConnection(ctx, c); err != nil {
		return Subscribed{}, err
	}
	msgs, next, err := s.Backfills.Backfill(ctx, c.ChannelID, since, MaxBackfill)
	if err != nil {
		return Subscribed{}, err
	}
	frames, err := s.frames(ctx, c, msgs, "message")
	if err != nil {
		return Subscribed{}, err
	}
	out := Subscribed{Connection: c, Backfill: frames, sent: map[string]bool{}}
	cut := s.Now().UTC().Add(-RecentWindow)
	for _, m := range msgs {
		out.sent[m.ID] = true
		if m.CreatedAt.After(cut) {
			out.recent = append(out.recent, m.ID)
		}
	}
	if next != "" {
		var cur *string
		if s.Cursor != nil {
			v := s.Cursor(c, next)
			cur = &v
		}
		b, _ := json.Marshal(struct {
			Type       string  `json:"type"`
			NextCursor *string `json:"next_cursor"`
		}{"backfill_truncated", cur})
		out.Backfill = append(out.Backfill, b)
	}
	return out, nil
}

// Ready ends a subscribe's backfill, after "subscribed" was sent (see
// backfill): it returns the frames of the messages whose pushes were held
// meanwhile, to send next. Nothing for a subscribe without "since".
// Errors: those of the store; the client then reconnects (the route closes
// the connection).
func (s *Subscriber) Ready(ctx context.Context, sub Subscribed) ([][]byte, error) {
	c := sub.Connection
	if !c.Pending {
		return nil, nil
	}
	held, err := s.Backfills.Ready(ctx, c.ChannelID, c.ID, sub.recent)
	if err != nil || len(held) == 0 {
		return nil, err
	}
	var stored, changed []string
	for _, h := range held {
		kind, id, _ := strings.Cut(h, "#")
		switch {
		case kind == holdUpdated:
			changed = append(changed, id)
		case !sub.sent[id]:
			stored = append(stored, id)
		}
	}
	var out [][]byte
	for _, group := range []struct {
		ids []string
		typ string
	}{{stored, "message"}, {changed, "message.updated"}} {
		if len(group.ids) == 0 {
			continue
		}
		msgs, err := s.Backfills.Messages(ctx, c.ChannelID, group.ids)
		if err != nil {
			return nil, err
		}
		frames, err := s.frames(ctx, c, msgs, group.typ)
		if err != nil {
			return nil, err
		}
		out = append(out, frames...)
	}
	return out, nil
}

// frames renders msgs for c's reader as pushes of type typ, reading their
// translations into c's language in one batch.
func (s *Subscriber) frames(ctx context.Context, c Connection, msgs []chat.Message, typ string) ([][]byte, error) {
	var ids, langs []string
	for _, m := range msgs {
		if l, ok := rooms.TranslationLanguage(m, c.Language); ok && l != "" {
			ids, langs = append(ids, m.ID), append(langs, l)
		}
	}
	var trs map[string]map[string]string
	if len(ids) > 0 {
		var err error
		if trs, err = s.Translations.Translations(ctx, ids, langs); err != nil {
			return nil, err
		}
	}
	out := make([][]byte, 0, len(msgs))
	for _, m := range msgs {
		b, err := messageFrame(s.Encode, typ, rooms.ViewOf(m, trs[m.ID], c.Language))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Kinds of a held push, the prefix of its entry on the connection's item.
const (
	holdStored  = "S"
	holdUpdated = "U"
)

// hold holds, for each pending connection of conns, the push of c's
// message for its subscribe to send (see backfill), and returns the
// connections to push to now: the others, less those whose backfill sent
// the message. A store that cannot hold (a test's fake) holds nothing.
func (p *Pusher) hold(ctx context.Context, c Change, conns []Connection) []Connection {
	if c.Kind != MessageStored && c.Kind != MessageChanged {
		return conns
	}
	h, _ := p.Store.(Holder)
	kind := holdStored
	if c.Kind == MessageChanged {
		kind = holdUpdated
	}
	out := conns[:0:0]
	for _, conn := range conns {
		backfilled := conn.Backfilled
		if conn.Pending && h != nil {
			held, now, err := h.Hold(ctx, conn.ChannelID, conn.ID, kind+"#"+c.Message.ID)
			if err != nil {
				slog.WarnContext(ctx, "realtime: hold push", "connection", conn.ID, "error", err.Error())
			}
			if held {
				continue
			}
			if err == nil {
				backfilled = now
			}
		}
		if c.Kind == MessageStored && slices.Contains(backfilled, c.Message.ID) {
			continue
		}
		out = append(out, conn)
	}
	return out
}

// messageFrame is the push of view as type typ, or, past MaxMessageBytes,
// the notice that names the message for the client to read over HTTP (as
// the live push does).
func messageFrame(encode func(chat.MessageView) ([]byte, error), typ string, view chat.MessageView) ([]byte, error) {
	data, err := encode(view)
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
