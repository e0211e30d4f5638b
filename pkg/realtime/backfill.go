package realtime

import (
	"context"
	"encoding/json"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/rooms"
)

// RecentWindow is how long after a message is stored its live push may
// still be on its way (the stream's lag, a retried batch): a backfill
// records on the connection the ids of the messages it sent that are this
// recent, and the push skips them for that connection.
const RecentWindow = time.Minute

// backfill registers c, then reads and renders what came after since.
//
// The join of backfill and live pushes: c is stored before the backfill is
// read, so every message stored after that is pushed live, and every
// message stored before is in the backfill (read after, consistently):
// nothing falls between. A message can be both in the backfill and about
// to be pushed; the ids of the recent ones the backfill holds are recorded
// on c's item before they are sent, and the push skips them. What remains
// is a push that read c's item in the moment between its registration and
// that record: the same view then arrives twice, and clients replace views
// by id (the contract's rule for message.updated; the guest page does).
//
// Calls beyond the subscribe's: one Query, at most two BatchGetItem (the
// reader's translations, 100 keys each), at most one UpdateItem (only when
// the backfill holds recent messages).
func (s *Subscriber) backfill(ctx context.Context, c Connection, since string) (Subscribed, error) {
	if err := s.Store.PutConnection(ctx, c); err != nil {
		return Subscribed{}, err
	}
	msgs, next, err := s.Backfills.Backfill(ctx, c.ChannelID, since, MaxBackfill)
	if err != nil {
		return Subscribed{}, err
	}
	var ids, langs []string
	for _, m := range msgs {
		if l, ok := rooms.TranslationLanguage(m, c.Language); ok && l != "" {
			ids, langs = append(ids, m.ID), append(langs, l)
		}
	}
	var trs map[string]map[string]string
	if len(ids) > 0 {
		if trs, err = s.Translations.Translations(ctx, ids, langs); err != nil {
			return Subscribed{}, err
		}
	}
	out := Subscribed{Connection: c}
	cut := s.Now().UTC().Add(-RecentWindow)
	var recent []string
	for _, m := range msgs {
		b, err := messageFrame(s.Encode, "message", rooms.ViewOf(m, trs[m.ID], c.Language))
		if err != nil {
			return Subscribed{}, err
		}
		out.Backfill = append(out.Backfill, b)
		if m.CreatedAt.After(cut) {
			recent = append(recent, m.ID)
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
	if len(recent) > 0 {
		if err := s.Backfills.MarkBackfilled(ctx, c.ChannelID, c.ID, recent); err != nil {
			return Subscribed{}, err
		}
		out.Connection.Backfilled = recent
	}
	return out, nil
}

// messageFrame is the push of view as type typ, or, past MaxMessageBytes,
// the notice that names the message for the client to read over HTTP (as
// the live push does).
func messageFrame(encode func(rooms.MessageView) ([]byte, error), typ string, view rooms.MessageView) ([]byte, error) {
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
