package realtime

import (
	"bytes"
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
// What came after since is every message stored after it and every change
// (edit, deletion, translation landing) made after since was stored to a
// message the client already holds (since or older): the latter come from
// the channel's change log (ChangeLog, written by the push before it reads
// the audience), as message.updated or message.deleted of the message's
// state now. Both are merged oldest first, at most MaxBackfill frames; the
// changes come whole, the newest messages fill what is left, and
// backfill_truncated with a cursor tells the client to page back for the
// rest. When the changes alone do not fit, or since is older than the log
// keeps (ChangeRetention), backfill_truncated carries no cursor and
// "reload": the client reads its list anew.
//
// The join of backfill and live pushes, exact: c is stored (pending)
// before the backfill is read, so every message stored or changed later
// has its push read c; a push that finds c pending does not send but holds
// the message on c's item (Holder, one conditional write). The route sends
// the backfill, then "subscribed", then Ready (one write) stops the
// holding, records the recent ids the backfill sent (a later push skips
// them) and returns what was held: each held message the backfill did not
// hold is sent then, as a live push, and each held change as the
// message's state then. A push that meets c no longer pending sends as
// usual. So every message reaches the client once, every change's outcome
// reaches it, and the backfill comes before "subscribed".
//
// Calls beyond the subscribe's: two Queries (messages, change log), at most
// two BatchGetItem (the reader's translations, 100 keys each), one more
// for the changed messages when there are any (and their translations),
// one UpdateItem (Ready); only when a message landed or changed during the
// backfill, one BatchGetItem more for it (and one for its translation).
// MaxPending is how long a subscribe's backfill may hold pushes: far more
// than the realtime function's 10 s timeout, within which it sends Ready.
const MaxPending = 30 * time.Second

func (s *Subscriber) backfill(ctx context.Context, c Connection, since string) (Subscribed, error) {
	c.Pending, c.PendingUntil = true, s.Now().UTC().Add(MaxPending)
	if err := s.Store.PutConnection(ctx, c); err != nil {
		return Subscribed{}, err
	}
	out := Subscribed{Connection: c, sent: map[string]bool{}, changes: map[string][]byte{}}
	sinceAt := chat.IDTime(since)
	if sinceAt.Before(s.Now().UTC().Add(-ChangeRetention)) {
		out.Backfill = [][]byte{reloadFrame()}
		return out, nil
	}
	logged, complete, err := s.Backfills.Changed(ctx, c.ChannelID, sinceAt, MaxBackfill)
	if err != nil {
		return Subscribed{}, err
	}
	// Changes to messages after since are in their stored state below.
	var older []LoggedChange
	for _, l := range logged {
		if l.MessageID <= since {
			older = append(older, l)
		}
	}
	if !complete || len(older) >= MaxBackfill {
		out.Backfill = [][]byte{reloadFrame()}
		return out, nil
	}
	changed, err := s.changeFrames(ctx, c, older)
	if err != nil {
		return Subscribed{}, err
	}
	msgs, next, err := s.Backfills.Backfill(ctx, c.ChannelID, since, MaxBackfill-len(older))
	if err != nil {
		return Subscribed{}, err
	}
	frames, err := s.frames(ctx, c, msgs, "message")
	if err != nil {
		return Subscribed{}, err
	}
	// Oldest first: a message at its id's time, a change at its log's.
	i, j := 0, 0
	for i < len(changed) || j < len(msgs) {
		if j == len(msgs) || i < len(changed) && changed[i].at.Before(chat.IDTime(msgs[j].ID)) {
			out.Backfill = append(out.Backfill, changed[i].frame)
			out.changes[changed[i].id] = changed[i].frame
			i++
			continue
		}
		out.Backfill = append(out.Backfill, frames[j])
		j++
	}
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

// reloadFrame tells a reconnecting client that what changed since its
// since cannot all be sent: it reads its list anew (GET .../messages).
func reloadFrame() []byte {
	b, _ := json.Marshal(struct {
		Type       string  `json:"type"`
		NextCursor *string `json:"next_cursor"`
		Reload     bool    `json:"reload"`
	}{"backfill_truncated", nil, true})
	return b
}

// changeFrame is a changed message's push, to be sent at its time.
type changeFrame struct {
	id    string
	at    time.Time
	frame []byte
}

// changeFrames renders, for c's reader and in logged's order, the state
// now of each logged message: message.deleted for a deleted one (no
// content), else message.updated with its view. A message gone from the
// table is left out.
func (s *Subscriber) changeFrames(ctx context.Context, c Connection, logged []LoggedChange) ([]changeFrame, error) {
	if len(logged) == 0 {
		return nil, nil
	}
	ids := make([]string, len(logged))
	for i, l := range logged {
		ids[i] = l.MessageID
	}
	msgs, err := s.Backfills.Messages(ctx, c.ChannelID, ids)
	if err != nil {
		return nil, err
	}
	frames, err := s.stateFrames(ctx, c, msgs)
	if err != nil {
		return nil, err
	}
	out := make([]changeFrame, 0, len(logged))
	for _, l := range logged {
		if b, ok := frames[l.MessageID]; ok {
			out = append(out, changeFrame{id: l.MessageID, at: l.At, frame: b})
		}
	}
	return out, nil
}

// stateFrames renders msgs' states now for c's reader, by id: a deleted
// message as message.deleted with its id alone, another as message.updated
// with its view.
func (s *Subscriber) stateFrames(ctx context.Context, c Connection, msgs []chat.Message) (map[string][]byte, error) {
	var live []chat.Message
	out := make(map[string][]byte, len(msgs))
	for _, m := range msgs {
		if m.Deleted() {
			out[m.ID] = deletedFrame(m.ID)
			continue
		}
		live = append(live, m)
	}
	frames, err := s.frames(ctx, c, live, "message.updated")
	if err != nil {
		return nil, err
	}
	for i, m := range live {
		out[m.ID] = frames[i]
	}
	return out, nil
}

// Ready ends a subscribe's backfill, after "subscribed" was sent (see
// backfill): it returns the frames of the messages whose pushes were held
// meanwhile, to send next: a held new message the backfill did not send,
// and each held change as its message's state now (unless the backfill
// sent that very state). Nothing for a subscribe without "since".
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
	if len(stored) > 0 {
		msgs, err := s.Backfills.Messages(ctx, c.ChannelID, stored)
		if err != nil {
			return nil, err
		}
		frames, err := s.frames(ctx, c, msgs, "message")
		if err != nil {
			return nil, err
		}
		out = append(out, frames...)
	}
	if len(changed) > 0 {
		msgs, err := s.Backfills.Messages(ctx, c.ChannelID, changed)
		if err != nil {
			return nil, err
		}
		frames, err := s.stateFrames(ctx, c, msgs)
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			if b := frames[m.ID]; !bytes.Equal(b, sub.changes[m.ID]) {
				out = append(out, b)
			}
		}
	}
	return out, nil
}

// frames renders msgs for c's reader as pushes of type typ, reading their
// translations into c's language in one batch, and their reactions as c's
// reader sees them in another (when some message has any).
func (s *Subscriber) frames(ctx context.Context, c Connection, msgs []chat.Message, typ string) ([][]byte, error) {
	var ids, langs []string
	for _, m := range msgs {
		if l, ok := rooms.TranslationLanguage(m, c.Language); ok && l != "" {
			ids, langs = append(ids, m.ID), append(langs, l)
		}
	}
	var trs map[string]map[string]chat.Translation
	if len(ids) > 0 {
		var err error
		if trs, err = s.Translations.Translations(ctx, ids, langs); err != nil {
			return nil, err
		}
	}
	views := make([]chat.MessageView, len(msgs))
	for i, m := range msgs {
		views[i] = rooms.ViewOf(m, trs[m.ID], c.Language)
	}
	// The reader's own reactions (Me): one batch read when some message
	// has reactions.
	if err := rooms.WithReactions(ctx, s.Reactions, rooms.ReaderOwner(c.Kind, c.SubjectID), views); err != nil {
		return nil, err
	}
	out := make([][]byte, 0, len(msgs))
	for _, v := range views {
		b, err := messageFrame(s.Encode, typ, v)
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
// the message. An edit or a deletion is held like a translation landing
// (its subscribe sends the message's state after the backfill, never
// before it). A store that cannot hold (a test's fake) holds nothing.
func (p *Pusher) hold(ctx context.Context, c Change, conns []Connection) []Connection {
	if c.Kind == RoomClosed {
		return conns
	}
	h, _ := p.Store.(Holder)
	kind := holdStored
	if c.Kind != MessageStored {
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
