package relay

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/relaystore"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/messageview"
)

// EventStore reads what events need and keeps their envelopes for
// redelivery.
type EventStore interface {
	EventWebhooks(ctx context.Context, workspaceID string) ([]events.Webhook, error)
	EventRoom(ctx context.Context, roomID string) (chat.Room, time.Time, error)
	GuestRoomID(ctx context.Context, channelID, guestID string) (string, error)
	EventTranslations(ctx context.Context, messageID string) (map[string]chat.Translation, error)
	// PutEvents stores evs' envelopes (bodies), and for each that carries
	// a message a record of it under the message, for ScrubMessageEvents.
	PutEvents(ctx context.Context, evs []events.Event, bodies [][]byte) error
	// DeletedMessages returns, of the messages refs name, those deleted
	// and when, read strongly consistent. Errors: EUnavailable.
	DeletedMessages(ctx context.Context, refs []events.MessageRef) (map[string]time.Time, error)
	// ScrubMessageEvents rewrites every stored envelope of message id's
	// events (those PutEvents recorded under it, and the events ids name)
	// with the message scrubbed (events.Scrub), deleted at deletedAt;
	// again is harmless. Errors: EUnavailable.
	ScrubMessageEvents(ctx context.Context, messageID string, deletedAt time.Time, ids ...string) error
}

// DeliverySender puts deliveries on the delivery queue.
type DeliverySender interface {
	// SendDeliveries sends ds, ten a call where they fit, and returns the
	// indexes of those not sent.
	SendDeliveries(ctx context.Context, ds []events.Delivery) (failed []int, err error)
}

// Fanout turns the stream's changes into events and queues one delivery
// per event and receiving webhook.
type Fanout struct {
	Store EventStore
	Queue DeliverySender
	Now   func() time.Time
	// View links the attachments of the messages events carry; its zero
	// value links none.
	View messageview.Renderer
}

// ChangeEntry is one stream record that reports an event.
type ChangeEntry struct {
	// ID identifies the record (its sequence number).
	ID     string
	Change relaystore.Change
	// At is the record's approximate creation time (whole seconds): the
	// time of a room.closed whose item does not say when it closed.
	At time.Time
}

func (f *Fanout) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// Send fans the entries' events out and returns the ids of the entries to
// retry: nothing of an entry is lost when any of its events could not be
// queued (a retried entry queues the same delivery ids again, which
// receivers dedupe). An event that carries a message deleted by now is
// stored and queued with the message scrubbed, and a message.translated of
// one is not sent at all (deletedMessages); a deletion's entry scrubs the
// envelopes stored earlier for its message (ScrubMessageEvents), after this
// batch's are stored.
func (f *Fanout) Send(ctx context.Context, entries []ChangeEntry) []string {
	hooks := map[string][]events.Webhook{}
	failed := map[string]bool{}
	// A batch may report one event twice (two MODIFYs of a translated
	// message): BatchWriteItem refuses duplicate keys, and the retried
	// first record queues it anyway.
	seen := map[string]bool{}
	type built struct {
		ev    events.Event
		owner string
		hs    []events.Webhook
	}
	var all []built
	for _, e := range entries {
		ws := workspaceOf(e.Change)
		hs, ok := hooks[ws]
		if !ok {
			var err error
			if hs, err = f.Store.EventWebhooks(ctx, ws); err != nil {
				slog.WarnContext(ctx, "relay: event webhooks", "workspace_id", ws, "error", err.Error())
				failed[e.ID] = true
				continue
			}
			hooks[ws] = hs
		}
		list, err := f.events(ctx, e, hs)
		if err != nil {
			slog.WarnContext(ctx, "relay: build events", "sequence_number", e.ID, "error", err.Error())
			failed[e.ID] = true
			continue
		}
		for _, ev := range list {
			if !seen[ev.ID] {
				seen[ev.ID] = true
				all = append(all, built{ev, e.ID, hs})
			}
		}
	}
	var refs []events.MessageRef
	for _, b := range all {
		if ref, ok := b.ev.MessageOf(); ok {
			refs = append(refs, ref)
		}
	}
	deleted, err := f.deletedMessages(ctx, refs)
	if err != nil {
		slog.WarnContext(ctx, "relay: deleted messages", "messages", len(refs), "error", err.Error())
	}
	var (
		evs    []events.Event
		bodies [][]byte
		owner  []string
		ds     []events.Delivery
		dOwner []string
	)
	for _, b := range all {
		ref, carries := b.ev.MessageOf()
		if carries && err != nil {
			failed[b.owner] = true // its message's state is unknown: retried
			continue
		}
		body, encErr := events.Encode(b.ev)
		if encErr != nil { // no message is that large: log, never block the shard
			slog.ErrorContext(ctx, "relay: event not encodable; dropped", "event_id", b.ev.ID, "type", b.ev.Type, "error", encErr.Error())
			continue
		}
		if at, gone := deleted[ref.ID]; carries && gone {
			if b.ev.Type == events.MessageTranslated {
				slog.InfoContext(ctx, "relay: message.translated of a deleted message not sent", "event_id", b.ev.ID, "message_id", ref.ID)
				continue
			}
			if body, encErr = events.Scrub(body, at); encErr != nil {
				slog.ErrorContext(ctx, "relay: event not scrubbed; dropped", "event_id", b.ev.ID, "type", b.ev.Type, "error", encErr.Error())
				continue
			}
		}
		evs, bodies, owner = append(evs, b.ev), append(bodies, body), append(owner, b.owner)
		for _, d := range events.Deliveries(b.ev, body, b.hs, b.ev.WorkspaceID) {
			ds, dOwner = append(ds, d), append(dOwner, b.owner)
		}
	}
	if len(evs) > 0 {
		if err := f.Store.PutEvents(ctx, evs, bodies); err != nil {
			slog.WarnContext(ctx, "relay: put events", "events", len(evs), "error", err.Error())
			for _, id := range owner {
				failed[id] = true
			}
			ds = nil
		}
	}
	if len(ds) > 0 {
		idx, err := f.Queue.SendDeliveries(ctx, ds)
		if err != nil {
			slog.WarnContext(ctx, "relay: send deliveries", "deliveries", len(ds), "error", err.Error())
		}
		for _, i := range idx {
			failed[dOwner[i]] = true
		}
	}
	for _, e := range entries {
		if e.Change.Kind != relaystore.ChangeDeleted {
			continue
		}
		m := e.Change.Message
		if err := f.Store.ScrubMessageEvents(ctx, m.ID, m.DeletedAt, derivedEventIDs(m)...); err != nil {
			slog.WarnContext(ctx, "relay: scrub the stored events of a deleted message", "message_id", m.ID, "error", err.Error())
			failed[e.ID] = true
		}
	}
	var out []string
	for _, e := range entries {
		if failed[e.ID] {
			out = append(out, e.ID)
			delete(failed, e.ID)
		}
	}
	return out
}

// derivedEventIDs are the ids of the events of m that carried its content
// and that its tombstone still names (its creation, its last edit): the
// envelopes stored before their message's records of its events were
// kept are found by them.
func derivedEventIDs(m chat.Message) []string {
	ids := []string{events.DeriveID(m.CreatedAt, events.MessageCreated, m.ID), events.DeriveID(m.CreatedAt, events.RoomMessageCreated, m.ID)}
	if rev := strconv.Itoa(m.Rev()); m.Rev() > 1 && !m.EditedAt.IsZero() {
		ids = append(ids, events.DeriveID(m.EditedAt, events.MessageUpdated, m.ID, rev), events.DeriveID(m.EditedAt, events.RoomMessageUpdated, m.ID, rev))
	}
	return ids
}

// deletedMessages returns which of refs' messages are deleted now, and
// when: one strongly consistent read per batch (of up to 100 messages),
// made only when some event of the batch carries a message. The events of
// a message are built from the stream's image of when they happened,
// which may be behind its deletion (a lagging stream, a replay of parked
// records), so its content must not be trusted to still be there.
func (f *Fanout) deletedMessages(ctx context.Context, refs []events.MessageRef) (map[string]time.Time, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	return f.Store.DeletedMessages(ctx, refs)
}

func workspaceOf(c relaystore.Change) string {
	switch c.Kind {
	case relaystore.ChangeMessage, relaystore.ChangeTranslated, relaystore.ChangeEdited, relaystore.ChangeDeleted:
		return c.Message.WorkspaceID
	case relaystore.ChangeWebhookDisabled, relaystore.ChangeReaction:
		return c.WorkspaceID
	case relaystore.ChangeGuest:
		return c.Guest.WorkspaceID
	}
	return c.Room.WorkspaceID
}

func anyReceives(t string, hs []events.Webhook) bool { return len(events.Recipients(t, hs)) > 0 }

// message is m's event data, its attachments linked for
// attachments.EventURLTTL by f.View.
func (f *Fanout) message(m chat.Message) events.Message {
	data := events.MessageOf(m)
	if len(m.Attachments) > 0 {
		view := f.View
		view.TTL = attachments.EventURLTTL
		data.Attachments = view.Attachments(chat.OriginalView(m))
	}
	return data
}

// events returns the events of one change that some webhook receives; it
// reads only what those need.
func (f *Fanout) events(ctx context.Context, e ChangeEntry, hs []events.Webhook) ([]events.Event, error) {
	c := e.Change
	now := f.now()
	mk := func(t string, at time.Time, ws string, data any, key ...string) events.Event {
		return events.Event{ID: events.DeriveID(at, append([]string{t}, key...)...), Type: t, WorkspaceID: ws, CreatedAt: at, Data: data}
	}
	var out []events.Event
	switch c.Kind {
	case relaystore.ChangeReaction:
		return reactionEvents(e, hs), nil
	case relaystore.ChangeMessage:
		m := c.Message
		if anyReceives(events.MessageCreated, hs) {
			out = append(out, mk(events.MessageCreated, m.CreatedAt, m.WorkspaceID, f.message(m), m.ID))
		}
		if m.Author.Type == chat.AuthorGuest && anyReceives(events.RoomMessageCreated, hs) {
			roomID, err := f.Store.GuestRoomID(ctx, m.ChannelID, m.Author.ID)
			if chat.ErrorCode(err) == chat.ENotFound {
				slog.WarnContext(ctx, "relay: guest message without a room; room.message_created not sent", "message_id", m.ID)
				break
			}
			if err != nil {
				return nil, err
			}
			r, created, err := f.Store.EventRoom(ctx, roomID)
			if err != nil {
				return nil, err
			}
			out = append(out, mk(events.RoomMessageCreated, m.CreatedAt, m.WorkspaceID,
				events.RoomMessage{Room: events.RoomOf(r, created, now), Message: f.message(m)}, m.ID))
		}
	case relaystore.ChangeTranslated:
		m := c.Message
		if !anyReceives(events.MessageTranslated, hs) {
			break
		}
		tr, err := f.Store.EventTranslations(ctx, m.ID)
		if err != nil {
			return nil, err
		}
		if m.Rev() > 1 {
			// Only this revision's: an earlier one's in a language no
			// longer read may still be stored.
			for l := range tr {
				if !slices.Contains(m.TranslatedLanguages, l) {
					delete(tr, l)
				}
			}
		}
		data := f.message(m)
		data.Translations = make(map[string]string, len(tr))
		for l, t := range tr {
			data.Translations[l] = t.Content
			if t.AltTexts != nil {
				if data.AltTexts == nil {
					data.AltTexts = map[string][]string{}
				}
				data.AltTexts[l] = t.AltTexts
			}
		}
		// One per revision: an edit's translations are a new event.
		key := []string{m.ID}
		if m.Rev() > 1 {
			data.Revision = m.Rev()
			key = append(key, strconv.Itoa(m.Rev()))
		}
		out = append(out, mk(events.MessageTranslated, c.TranslatedAt, m.WorkspaceID, data, key...))
	case relaystore.ChangeEdited, relaystore.ChangeDeleted:
		evs, err := f.editEvents(ctx, c, hs, now, mk)
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	case relaystore.ChangeRoom:
		if anyReceives(events.RoomCreated, hs) {
			out = append(out, mk(events.RoomCreated, c.RoomCreated, c.Room.WorkspaceID, events.RoomOf(c.Room, c.RoomCreated, now), c.Room.ID))
		}
	case relaystore.ChangeRoomClosed:
		// Timed by the close itself (the room item's closed_at, to the
		// millisecond); the record's time, cut to the second by the
		// stream, only for a room closed before the item kept it.
		at := c.At
		if at.IsZero() {
			at = e.At
		}
		if anyReceives(events.RoomClosed, hs) {
			out = append(out, mk(events.RoomClosed, at, c.Room.WorkspaceID, events.RoomOf(c.Room, c.RoomCreated, now), c.Room.ID))
		}
	case relaystore.ChangeWebhookDisabled:
		if anyReceives(events.WebhookDisabled, hs) {
			out = append(out, mk(events.WebhookDisabled, c.At, c.WorkspaceID, c.Disabled, c.Disabled.WebhookID, c.Disabled.Reason))
		}
	case relaystore.ChangeGuest:
		g := c.Guest
		if !anyReceives(events.RoomGuestJoined, hs) {
			break
		}
		r, created, err := f.Store.EventRoom(ctx, g.RoomID)
		if err != nil {
			return nil, err
		}
		out = append(out, mk(events.RoomGuestJoined, g.UpdatedAt, g.WorkspaceID, events.GuestJoined{Room: events.RoomOf(r, created, now),
			Guest: events.Guest{ID: g.ID, Nickname: g.Nickname, PreferredLanguage: g.PreferredLanguage}}, g.ID, g.UpdatedAt.String()))
	}
	return out, nil
}

// editEvents returns the events of an edit (message.updated, and
// room.message_updated for a guest's message) or a deletion
// (message.deleted, room.message_deleted), contract section 13.
func (f *Fanout) editEvents(ctx context.Context, c relaystore.Change, hs []events.Webhook, now time.Time,
	mk func(t string, at time.Time, ws string, data any, key ...string) events.Event) ([]events.Event, error) {
	m := c.Message
	typ, roomTyp, at := events.MessageUpdated, events.RoomMessageUpdated, m.EditedAt
	key := []string{m.ID, strconv.Itoa(m.Rev())}
	var data any = f.message(m)
	if c.Kind == relaystore.ChangeDeleted {
		typ, roomTyp, at, key, data = events.MessageDeleted, events.RoomMessageDeleted, m.DeletedAt, []string{m.ID}, events.DeletedOf(m)
	}
	var out []events.Event
	if anyReceives(typ, hs) {
		out = append(out, mk(typ, at, m.WorkspaceID, data, key...))
	}
	if m.Author.Type != chat.AuthorGuest || !anyReceives(roomTyp, hs) {
		return out, nil
	}
	roomID, err := f.Store.GuestRoomID(ctx, m.ChannelID, m.Author.ID)
	if chat.ErrorCode(err) == chat.ENotFound {
		slog.WarnContext(ctx, "relay: guest message without a room; room event not sent", "message_id", m.ID, "type", roomTyp)
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	r, created, err := f.Store.EventRoom(ctx, roomID)
	if err != nil {
		return nil, err
	}
	room := events.RoomOf(r, created, now)
	if c.Kind == relaystore.ChangeDeleted {
		return append(out, mk(roomTyp, at, m.WorkspaceID, events.RoomDeleted{Room: room, Message: events.DeletedOf(m)}, key...)), nil
	}
	return append(out, mk(roomTyp, at, m.WorkspaceID, events.RoomMessage{Room: room, Message: f.message(m)}, key...)), nil
}

// reactionEvents are a reader item's change's events: one
// message.reaction_added per emoji added and one message.reaction_removed
// per emoji removed, for the outbound webhooks subscribed to them. An
// event's id derives from the stream record (its sequence number), so a
// retried or replayed record makes the same event again (the same id and
// delivery ids, which the event store and receivers dedupe), and two
// additions of one emoji at different times are two events.
func reactionEvents(e ChangeEntry, hs []events.Webhook) []events.Event {
	r := e.Change.Reaction
	author := events.ReactionAuthor{Type: r.Author.Type, ID: r.Author.ID, Name: r.Author.Name}
	if author.Type == "" || author.ID == "" {
		author.Type, author.ID, _ = strings.Cut(r.Owner, ":")
	}
	var out []events.Event
	add := func(t string, emoji []string) {
		if !anyReceives(t, hs) {
			return
		}
		for _, em := range emoji {
			out = append(out, events.Event{ID: events.DeriveID(r.At, t, r.MessageID, r.Owner, em, e.ID), Type: t, WorkspaceID: r.WorkspaceID, CreatedAt: r.At,
				Data: events.Reaction{MessageID: r.MessageID, ChannelID: r.ChannelID, Emoji: em, Author: author}})
		}
	}
	add(events.MessageReactionAdded, r.Added)
	add(events.MessageReactionRemoved, r.Removed)
	return out
}
