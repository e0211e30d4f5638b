package edits

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
)

// Actor is who edits or deletes: a workspace user, a guest or an inbound
// webhook, as its credential resolved.
type Actor struct {
	// Type is chat.AuthorUser, chat.AuthorGuest or chat.AuthorBot; ID is
	// the user's, guest's or webhook's id: a message's author is matched
	// on both.
	Type        string
	ID          string
	Name        string
	WorkspaceID string
	// Admin lets a workspace user delete any message of its workspace.
	Admin bool
}

// author is the actor as a message's author.
func (a Actor) author() chat.Author { return chat.Author{Type: a.Type, ID: a.ID, Name: a.Name} }

// Reads reports whether the actor can list the channel's messages: a user
// or a guest, who gets 403 for a message that is not theirs. A webhook
// cannot read, so it gets 404 for any message it did not post: it may not
// learn that the message exists.
func (a Actor) Reads() bool { return a.Type != chat.AuthorBot }

// Change is one edit or deletion, as the store writes it.
type Change struct {
	ChannelID string
	MessageID string
	Actor     Actor
	// Content is an edit's new content.
	Content string
	// IfMatch is the revision the caller holds, 0 for none.
	IfMatch int
	// AnyAuthor lets a deletion take any message of the actor's workspace
	// (an admin), not only the actor's own.
	AnyAuthor bool
	// Audit, for a deletion, is the audit event written in the same write:
	// the deletion then takes only a message that is not the actor's own
	// (an admin's deletion of another's message is audited).
	Audit *chat.AuditEvent
	// Now is when the change is made.
	Now time.Time
}

// Store writes edits and deletions of messages.
type Store interface {
	// EditMessage replaces the content of message c.MessageID of channel
	// c.ChannelID with c.Content, adds 1 to its revision, sets edited_at
	// to c.Now and queues the new revision for translation, in one
	// conditional write that holds only when: the message exists in the
	// channel and in c.Actor's workspace, is not deleted, was posted by
	// c.Actor, is at revision c.IfMatch (when set), and its content
	// differs from c.Content. It returns the message before the write and
	// whether the write happened; when it did not, found reports whether
	// the message exists at all. Errors: EUnavailable.
	EditMessage(ctx context.Context, c Change) (old chat.Message, applied, found bool, err error)
	// DeleteMessage makes the message a tombstone (deleted_at, deleted_by
	// c.Actor; no content, no translations) in one conditional write that
	// holds when the message exists in the channel and in c.Actor's
	// workspace, is not deleted, and was posted by c.Actor or c.AnyAuthor
	// is set. With c.Audit, the write also puts the audit event, atomically,
	// and holds only for a message not posted by c.Actor. Results as
	// EditMessage (old is the zero Message after an audited write).
	// Errors: EUnavailable.
	DeleteMessage(ctx context.Context, c Change) (old chat.Message, applied, found bool, err error)
}

// Service edits and deletes messages.
type Service struct {
	Store Store
	IDs   *chat.IDs
	Now   chat.Clock
}

// ParseIfMatch reads an If-Match header: "" is no condition (0, true); a
// revision is a positive integer, bare or quoted as an entity tag ("3",
// "\"3\"", "W/\"3\""); "*" matches any revision. ok is false for any other
// value, which matches no revision.
func ParseIfMatch(h string) (rev int, ok bool) {
	h = strings.TrimSpace(h)
	if h == "" || h == "*" {
		return 0, true
	}
	h = strings.TrimPrefix(h, "W/")
	h = strings.Trim(h, `"`)
	n, err := strconv.Atoi(h)
	if err != nil || n < 1 || strconv.Itoa(n) != h {
		return 0, false
	}
	return n, true
}

// ErrNotFound is the answer for a message the caller may not know exists.
func ErrNotFound() error { return chat.Errorf(chat.ENotFound, "The message was not found.") }

func errForbidden() error {
	return chat.Errorf(chat.EForbidden, "This action is unauthorized.")
}

// ErrDeleted answers an edit of a deleted message.
func ErrDeleted() error { return chat.Errorf(chat.EMessageDeleted, "The message was deleted.") }

// ErrRevisionMismatch answers a stale If-Match.
func ErrRevisionMismatch() error {
	return chat.Errorf(chat.ERevisionMismatch, "The message has changed since that revision. Read it again.")
}

// maxRaces bounds the retries of a write refused by a condition that the
// message read back no longer explains (it changed in between).
const maxRaces = 5

// Edit replaces the content of message messageID of channelID by actor
// and returns the new revision as its author reads it: the new original,
// untranslated until its translations land. The decisions, in order:
// EValidation on "content"; ENotFound for a malformed id, a message not
// in the channel (or of another workspace), or, for a webhook, one it did
// not post; EForbidden for a user's or guest's message of someone else;
// EMessageDeleted for a tombstone; ERevisionMismatch when ifMatch (the
// If-Match header) is set and not the current revision. An edit that
// leaves the content as it was changes nothing and returns the message as
// it is. Errors otherwise: those of Store.
func (s *Service) Edit(ctx context.Context, actor Actor, channelID, messageID, content, ifMatch string) (chat.MessageView, error) {
	if problem := messages.CheckContent(content); problem != "" {
		return chat.MessageView{}, chat.FieldError("content", problem)
	}
	rev, ok := ParseIfMatch(ifMatch)
	if !chat.ValidID(messageID) {
		return chat.MessageView{}, ErrNotFound()
	}
	if !ok {
		// No revision matches a value that is not one; the message's
		// existence is still judged first.
		rev = -1
	}
	c := Change{ChannelID: channelID, MessageID: messageID, Actor: actor, Content: content, IfMatch: rev}
	for race := 0; ; race++ {
		c.Now = s.Now().UTC()
		old, applied, found, err := s.Store.EditMessage(ctx, c)
		if err != nil {
			return chat.MessageView{}, err
		}
		if applied {
			// The old revision's translations are never shown again: the
			// write cleared the languages that name them. The new
			// revision's replace them; a deletion removes them all.
			return chat.OriginalView(Edited(old, content, c.Now)), nil
		}
		if err := refusal(actor, old, found, false, rev); err != nil {
			return chat.MessageView{}, err
		}
		if old.Content == content {
			// Nothing to change: no revision, no event, no translation.
			return chat.OriginalView(old), nil
		}
		if race >= maxRaces {
			return chat.MessageView{}, chat.Unavailable(chat.Errorf(chat.EConflict, "edit of message %s kept racing", messageID))
		}
	}
}

// Delete makes message messageID of channelID a tombstone: its content and
// translations leave the store. A user deletes their own messages, an
// admin any of the workspace; a guest or webhook its own. Deleting a
// tombstone again succeeds (DELETE is idempotent) for whoever could have
// deleted it. The decisions are Edit's, without content or revision.
// An admin deleting someone else's message is written to the audit trail.
func (s *Service) Delete(ctx context.Context, actor Actor, channelID, messageID string) error {
	if !chat.ValidID(messageID) {
		return ErrNotFound()
	}
	c := Change{ChannelID: channelID, MessageID: messageID, Actor: actor, AnyAuthor: actor.Admin}
	audited := actor.Admin
	for race := 0; ; race++ {
		c.Now = s.Now().UTC()
		c.Audit = nil
		if audited {
			// An admin's deletion of another's message is audited in the
			// same write, so that the one is never without the other.
			c.Audit = &chat.AuditEvent{ID: s.IDs.New(c.Now), WorkspaceID: actor.WorkspaceID, ActorType: actor.Type,
				ActorID: actor.ID, Action: ActionMessageDeleted, TargetType: "message", TargetID: messageID,
				Changes: []string{}, CreatedAt: c.Now, ExpiresAt: c.Now.Add(chat.AuditRetention)}
		}
		old, applied, found, err := s.Store.DeleteMessage(ctx, c)
		if err != nil {
			return err
		}
		if applied {
			// The stored translations go off the request path: the
			// deletion's stream record has the outbox relay remove them.
			return nil
		}
		if audited && found && isAuthor(actor, old) && !old.Deleted() {
			// The admin's own message: deleted without an audit event.
			audited = false
			continue
		}
		err = refusal(actor, old, found, true, 0)
		if chat.IsCode(err, chat.EMessageDeleted) {
			return nil
		}
		if err != nil {
			return err
		}
		if race >= maxRaces {
			return chat.Unavailable(chat.Errorf(chat.EConflict, "delete of message %s kept racing", messageID))
		}
	}
}

// ActionMessageDeleted is the audit trail's action for an admin's deletion
// of another user's message.
const ActionMessageDeleted = "message.deleted"

func isAuthor(a Actor, m chat.Message) bool { return m.Author.Type == a.Type && m.Author.ID == a.ID }

// refusal tells why a write was refused, from the message as it is; nil
// when nothing about it explains the refusal (a concurrent change, or an
// edit to the same content).
func refusal(a Actor, m chat.Message, found, deleting bool, ifMatch int) error {
	switch {
	case !found || m.WorkspaceID != a.WorkspaceID:
		return ErrNotFound()
	case !isAuthor(a, m) && !(deleting && a.Admin):
		if !a.Reads() {
			return ErrNotFound()
		}
		return errForbidden()
	case m.Deleted():
		return ErrDeleted()
	case ifMatch != 0 && m.Rev() != ifMatch:
		return ErrRevisionMismatch()
	}
	return nil
}

// Edited returns m after an edit to content at now: the next revision,
// its translations not yet made.
func Edited(m chat.Message, content string, now time.Time) chat.Message {
	m.Content = content
	m.Revision = m.Rev() + 1
	m.EditedAt = now
	m.TranslatedLanguages = nil
	return m
}

// Tombstone returns m as a deletion leaves it: no content, no
// translations.
func Tombstone(m chat.Message, by chat.Author, now time.Time) chat.Message {
	m.Content, m.TranslatedLanguages = "", nil
	m.DeletedAt, m.DeletedBy = now, by
	return m
}
