package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messageview"
	"github.com/oklog/ulid/v2"
)

// Event types of contract section 11.
const (
	MessageCreated     = "message.created"
	MessageTranslated  = "message.translated"
	RoomCreated        = "room.created"
	RoomGuestJoined    = "room.guest_joined"
	RoomMessageCreated = "room.message_created"
	RoomClosed         = "room.closed"
	// Edits and deletions (contract section 13).
	MessageUpdated     = "message.updated"
	MessageDeleted     = "message.deleted"
	RoomMessageUpdated = "room.message_updated"
	RoomMessageDeleted = "room.message_deleted"
	// Reactions (contract section 18), to outbound webhooks only.
	MessageReactionAdded   = "message.reaction_added"
	MessageReactionRemoved = "message.reaction_removed"
)

// Types lists every event type, the values an outbound webhook's events may
// hold.
var Types = []string{MessageCreated, MessageTranslated, RoomCreated, RoomGuestJoined, RoomMessageCreated, RoomClosed,
	WebhookDisabled, MessageUpdated, MessageDeleted, RoomMessageUpdated, RoomMessageDeleted,
	MessageReactionAdded, MessageReactionRemoved}

// OutboundTypes are the types an outbound webhook may subscribe to: every
// type but room.message_created, room.message_updated and
// room.message_deleted, which go to support webhooks only.
var OutboundTypes = []string{MessageCreated, MessageTranslated, RoomCreated, RoomGuestJoined, RoomClosed,
	WebhookDisabled, MessageUpdated, MessageDeleted, MessageReactionAdded, MessageReactionRemoved}

// supportTypes are sent to every active support webhook.
var supportTypes = []string{RoomCreated, RoomGuestJoined, RoomMessageCreated, RoomClosed, RoomMessageUpdated, RoomMessageDeleted}

// Valid reports whether t is an event type.
func Valid(t string) bool { return slices.Contains(Types, t) }

// Webhook kinds.
const (
	KindOutbound = "outbound"
	KindSupport  = "support"
)

// Webhook is what deciding the recipients of an event needs of a webhook.
type Webhook struct {
	ID   string
	Kind string
	// Key is the webhook item's sort key in its workspace.
	Key    string
	Active bool
	// Events are an outbound webhook's subscriptions.
	Events []string
}

// Receives reports whether w is sent an event of type t: an active
// outbound webhook subscribed to t (room.message_created goes to support
// webhooks only), or an active support webhook for the room events.
func (w Webhook) Receives(t string) bool {
	if !w.Active {
		return false
	}
	switch w.Kind {
	case KindOutbound:
		return slices.Contains(OutboundTypes, t) && slices.Contains(w.Events, t)
	case KindSupport:
		return slices.Contains(supportTypes, t)
	}
	return false
}

// Recipients returns the webhooks among hooks that receive an event of
// type t, in order.
func Recipients(t string, hooks []Webhook) []Webhook {
	var out []Webhook
	for _, w := range hooks {
		if w.Receives(t) {
			out = append(out, w)
		}
	}
	return out
}

// Event is one event, before encoding.
type Event struct {
	ID          string
	Type        string
	WorkspaceID string
	// CreatedAt is the moment of the change the event reports; the
	// envelope carries it to the millisecond, as ID's time part does.
	CreatedAt time.Time
	Data      any
}

// Reaction is the data of message.reaction_added and
// message.reaction_removed: who reacted (Author, without an avatar) with
// which emoji on which message. It carries no content, so a deletion
// leaves it as it is.
type Reaction struct {
	MessageID string         `json:"message_id"`
	ChannelID string         `json:"channel_id"`
	Emoji     string         `json:"emoji"`
	Author    ReactionAuthor `json:"author"`
}

// ReactionAuthor is who reacted: a user or a guest.
type ReactionAuthor struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Author is a message's author as events show it.
type Author struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	AvatarURL *string `json:"avatar_url"`
}

// Message is the data of message.created, and with Translations of
// message.translated.
type Message struct {
	ID              string            `json:"id"`
	WorkspaceID     string            `json:"workspace_id"`
	ChannelID       string            `json:"channel_id"`
	Author          Author            `json:"author"`
	Content         string            `json:"content"`
	Language        string            `json:"language"`
	SkipTranslation bool              `json:"skip_translation"`
	CreatedAt       string            `json:"created_at"`
	Translations    map[string]string `json:"translations,omitempty"`
	// AltTexts are, beside Translations, the translated alt texts of the
	// message's attachments by language, each one per attachment in their
	// order ("" for one left as it is); absent where none was translated.
	AltTexts map[string][]string `json:"alt_texts,omitempty"`
	// Truncated says content (or a translation) was cut to fit the
	// envelope's cap.
	Truncated bool `json:"truncated,omitempty"`
	// Revision and EditedAt are set once the message was edited
	// (message.updated, and message.translated of a later revision).
	Revision int    `json:"revision,omitempty"`
	EditedAt string `json:"edited_at,omitempty"`
	// Attachments are the message's files, as views show them, with links
	// valid 24 hours from the event's making; absent for none.
	Attachments []messageview.AttachmentView `json:"attachments,omitempty"`
	// ThreadID is the root's id on a reply, null on a root (contract
	// section 18).
	ThreadID *string `json:"thread_id"`
}

// Deleted is the data of message.deleted (and, beside the room, of
// room.message_deleted): no content.
type Deleted struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	ChannelID   string `json:"channel_id"`
	DeletedAt   string `json:"deleted_at"`
	DeletedBy   Author `json:"deleted_by"`
}

// DeletedOf returns the message.deleted data of tombstone m.
func DeletedOf(m chat.Message) Deleted {
	return Deleted{ID: m.ID, WorkspaceID: m.WorkspaceID, ChannelID: m.ChannelID, DeletedAt: stamp(m.DeletedAt),
		DeletedBy: Author{Type: m.DeletedBy.Type, ID: m.DeletedBy.ID, Name: m.DeletedBy.Name}}
}

// RoomDeleted is the data of room.message_deleted.
type RoomDeleted struct {
	Room    Room    `json:"room"`
	Message Deleted `json:"message"`
}

// Room is a Temporary Room as section 9 shows it.
type Room struct {
	RoomID      string `json:"room_id"`
	WorkspaceID string `json:"workspace_id"`
	ChannelID   string `json:"channel_id"`
	Name        string `json:"name"`
	Status      string `json:"status"`
	ExpiresAt   string `json:"expires_at"`
	CreatedAt   string `json:"created_at"`
	JoinPath    string `json:"join_path"`
}

// Guest is a guest as events show it: never a token.
type Guest struct {
	ID                string `json:"id"`
	Nickname          string `json:"nickname"`
	PreferredLanguage string `json:"preferred_language"`
}

// GuestJoined is the data of room.guest_joined.
type GuestJoined struct {
	Room  Room  `json:"room"`
	Guest Guest `json:"guest"`
}

// RoomMessage is the data of room.message_created.
type RoomMessage struct {
	Room    Room    `json:"room"`
	Message Message `json:"message"`
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// envelopeTime is the layout of an envelope's created_at: RFC 3339 in UTC
// with always three digits of milliseconds, the precision of an event id's
// time part (a ULID's), so that the two say the same moment.
const envelopeTime = "2006-01-02T15:04:05.000Z"

// EnvelopeTime formats t as an envelope's created_at.
func EnvelopeTime(t time.Time) string { return t.UTC().Format(envelopeTime) }

// MessageOf returns the event view of m.
func MessageOf(m chat.Message) Message {
	a := Author{Type: m.Author.Type, ID: m.Author.ID, Name: m.Author.Name}
	if m.Author.AvatarURL != "" {
		a.AvatarURL = &m.Author.AvatarURL
	}
	out := Message{ID: m.ID, WorkspaceID: m.WorkspaceID, ChannelID: m.ChannelID, Author: a, Content: m.Content,
		Language: m.SourceLanguage, SkipTranslation: m.SkipTranslation, CreatedAt: stamp(m.CreatedAt)}
	if m.ThreadID != "" {
		out.ThreadID = &m.ThreadID
	}
	if !m.EditedAt.IsZero() {
		out.Revision, out.EditedAt = m.Rev(), stamp(m.EditedAt)
	}
	return out
}

// RoomOf returns the section 9 view of r at now: an active room past its
// expiry is "expired".
func RoomOf(r chat.Room, created, now time.Time) Room {
	st := r.Status
	if st == chat.RoomActive && !now.Before(r.ExpiresAt) {
		st = "expired"
	}
	return Room{RoomID: r.ID, WorkspaceID: r.WorkspaceID, ChannelID: r.ChannelID, Name: r.Name, Status: st,
		ExpiresAt: stamp(r.ExpiresAt), CreatedAt: stamp(created), JoinPath: "/api/v1/external/rooms/" + r.ID + "/guests"}
}

// IDTime returns the time an event id (a ULID) carries.
func IDTime(id string) (time.Time, bool) {
	u, err := ulid.ParseStrict(id)
	if err != nil {
		return time.Time{}, false
	}
	return ulid.Time(u.Time()), true
}

// DeriveID returns a ULID timed at t, to the millisecond, whose random part
// is a digest of parts, so that the same event or delivery always gets the
// same id (the relay may read a stream record more than once): an event's
// t is the moment of the change it reports, read from the item the change
// wrote, so ids of one resource's events sort in the order of its changes.
func DeriveID(t time.Time, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	var id ulid.ULID
	if err := id.SetTime(ulid.Timestamp(t)); err != nil {
		_ = id.SetTime(0)
	}
	copy(id[6:], h.Sum(nil))
	return id.String()
}

// DeliveryID is the delivery id (X-Service-Delivery) of event to webhook:
// the same on every attempt and every fan-out of the event.
func DeliveryID(ev Event, webhookID string) string {
	return DeriveID(ev.CreatedAt, "delivery", ev.ID, webhookID)
}

// MaxBytes caps an encoded envelope: 256 KiB less room for the queue
// message's attributes, so that an envelope always fits one SQS message.
const MaxBytes = 256<<10 - 2048

type envelope struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	CreatedAt   string `json:"created_at"`
	WorkspaceID string `json:"workspace_id"`
	Data        any    `json:"data"`
}

// Encode returns the envelope of ev as sent: JSON whose every character
// SQS accepts (others are written as \u escapes, which mean the same), at
// most MaxBytes. A message whose content or translations would pass it is
// cut, at a character boundary, to the longest that fits, and flagged
// "truncated": true.
func Encode(ev Event) ([]byte, error) {
	b, err := encode(ev)
	if err != nil || len(b) <= MaxBytes {
		return b, err
	}
	msg := messageIn(&ev)
	if msg == nil {
		return nil, fmt.Errorf("events: %s %s: %d bytes, more than %d", ev.Type, ev.ID, len(b), MaxBytes)
	}
	orig := *msg
	longest := utf8.RuneCountInString(orig.Content)
	for _, t := range orig.Translations {
		longest = max(longest, utf8.RuneCountInString(t))
	}
	for _, alts := range orig.AltTexts {
		for _, t := range alts {
			longest = max(longest, utf8.RuneCountInString(t))
		}
	}
	cut := func(n int) []byte {
		m := orig
		m.Truncated = true
		m.Content = prefix(orig.Content, n)
		if orig.Translations != nil {
			m.Translations = make(map[string]string, len(orig.Translations))
			for k, v := range orig.Translations {
				m.Translations[k] = prefix(v, n)
			}
		}
		if orig.AltTexts != nil {
			m.AltTexts = make(map[string][]string, len(orig.AltTexts))
			for k, alts := range orig.AltTexts {
				m.AltTexts[k] = make([]string, len(alts))
				for i, v := range alts {
					m.AltTexts[k][i] = prefix(v, n)
				}
			}
		}
		*msg = m
		out, _ := encode(ev)
		return out
	}
	lo, hi := 0, longest // cut(lo) fits, once checked
	if out := cut(0); len(out) > MaxBytes {
		return nil, fmt.Errorf("events: %s %s: %d bytes with no content, more than %d", ev.Type, ev.ID, len(out), MaxBytes)
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if len(cut(mid)) <= MaxBytes {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return cut(lo), nil
}

func messageIn(ev *Event) *Message {
	switch d := ev.Data.(type) {
	case Message:
		ev.Data = &d
		return &d
	case *Message:
		return d
	case RoomMessage:
		ev.Data = &d
		return &d.Message
	case *RoomMessage:
		return &d.Message
	}
	return nil
}

func prefix(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

func encode(ev Event) ([]byte, error) {
	b, err := json.Marshal(envelope{ID: ev.ID, Type: ev.Type, CreatedAt: EnvelopeTime(ev.CreatedAt), WorkspaceID: ev.WorkspaceID, Data: ev.Data})
	if err != nil {
		return nil, fmt.Errorf("events: encode %s: %w", ev.Type, err)
	}
	return queueSafe(b), nil
}

// queueSafe escapes the characters SQS refuses. JSON's structure is ASCII,
// so such a character can only be inside a string, where \uXXXX means it.
func queueSafe(b []byte) []byte {
	if !bytes.ContainsFunc(b, func(r rune) bool { return !chat.QueueSafe(r) }) {
		return b
	}
	var sb strings.Builder
	for _, r := range string(b) {
		if chat.QueueSafe(r) {
			sb.WriteRune(r)
			continue
		}
		fmt.Fprintf(&sb, `\u%04x`, r)
	}
	return []byte(sb.String())
}
