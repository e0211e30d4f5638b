package edits

import (
	"context"
	"errors"
	"fmt"
	"github.com/chatbridge/chat/pkg/rooms"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
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
	// SetAttachments makes an edit replace the message's attachments with
	// Attachments (nil: none), whatever its content: the write then holds
	// only at revision Base, the one the edit was decided on, instead of
	// on a change of content.
	SetAttachments bool
	Attachments    []chat.Attachment
	// Claims are those of Attachments the message did not carry: the
	// write claims their uploads for the actor, atomically.
	Claims []chat.Attachment
	// Base is the revision a write was decided on; for a deletion, 0
	// takes only a message without files (attachments or DroppedKeys),
	// and a positive one takes the message at that revision, files and
	// all.
	Base int
	// Dropped are the keys of files the write takes off the message: it
	// adds them to the message's DroppedKeys, until they are deleted.
	Dropped []string
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
	// the message exists at all. With c.SetAttachments the write also
	// sets the attachments to c.Attachments, claims c.Claims' uploads and
	// adds c.Dropped to DroppedKeys, and holds at revision c.Base instead
	// of on a content change; old is then the zero Message when it
	// applied. Errors: EUnavailable; an *attachments.ClaimError when an
	// upload of c.Claims cannot be attached.
	EditMessage(ctx context.Context, c Change) (old chat.Message, applied, found bool, err error)
	// DeleteMessage makes the message a tombstone (deleted_at, deleted_by
	// c.Actor; no content, no translations) in one conditional write that
	// holds when the message exists in the channel and in c.Actor's
	// workspace, is not deleted, and was posted by c.Actor or c.AnyAuthor
	// is set. With c.Audit, the write also puts the audit event, atomically,
	// and holds only for a message not posted by c.Actor. Without c.Base
	// the write holds only for a message without attachments or
	// DroppedKeys; with it, at revision c.Base, and it removes the
	// attachments and adds c.Dropped to DroppedKeys (a tombstone carries
	// no attachments). Results as EditMessage (old is the zero Message
	// after an audited write). Errors: EUnavailable.
	DeleteMessage(ctx context.Context, c Change) (old chat.Message, applied, found bool, err error)
	// Message reads message messageID of channelID as it is now (a
	// strongly consistent read); found is false when there is none.
	// Errors: EUnavailable.
	Message(ctx context.Context, channelID, messageID string) (m chat.Message, found bool, err error)
	// ClearDroppedKeys takes keys off the message's DroppedKeys once their
	// files are deleted; keys another write added since stay. A message
	// that is gone is not an error. Errors: EUnavailable.
	ClearDroppedKeys(ctx context.Context, channelID, messageID string, keys []string) error
}

// Service edits and deletes messages.
type Service struct {
	Store Store
	// Attachments checks and claims the uploads an edit attaches and
	// deletes the files a change takes off a message; nil (no bucket):
	// an edit that attaches, and a change that must delete files, answer
	// EUnavailable.
	Attachments *attachments.Service
	IDs         *chat.IDs
	Now         chat.Clock
	// Pause waits between attempts at deleting files; nil sleeps.
	Pause func(time.Duration)
	// Reactions reads the edited message's reactions for the answer (the
	// editor's Me); nil answers none.
	Reactions rooms.ReactionReader
}

// Body is an edit's body: the new content, when HasContent, and the
// message's new attachments, when SetAttachments (an empty list removes
// them all).
type Body struct {
	Content        string
	HasContent     bool
	Attachments    []attachments.Ref
	SetAttachments bool
}

// ReadBody reads an edit's "content" and "attachments" (attachments.Field)
// fields, adding any problem to v: content is required unless the edit
// carries attachments, and may then be blank when there is at least one
// (messages.CheckPostContent).
func ReadBody(obj jsonbody.Object, v *chat.Validation) Body {
	var b Body
	b.Attachments, b.SetAttachments = attachments.Field(obj, v)
	content, ok := obj.String(v, "content", "content")
	switch {
	case !ok && !v.Has("content"):
		if !b.SetAttachments {
			v.Add("content", "The content field is required.")
		}
	case ok:
		b.Content, b.HasContent = content, true
		if problem := checkContent(b, content, len(b.Attachments)); problem != "" {
			v.Add("content", problem)
		}
	}
	return b
}

// checkContent is the problem with content as the content of an edit b
// whose message then carries n attachments, or "".
func checkContent(b Body, content string, n int) string {
	if !b.SetAttachments {
		return messages.CheckContent(content)
	}
	return messages.CheckPostContent(content, n)
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

// Edit changes message messageID of channelID by actor as b says and
// returns the new revision as its author reads it: the new original,
// untranslated until its translations land. The decisions, in order:
// EValidation on "content" or "attachments"; ENotFound for a malformed id,
// a message not in the channel (or of another workspace), or, for a
// webhook, one it did not post; EForbidden for a user's or guest's
// message of someone else; EMessageDeleted for a tombstone;
// ERevisionMismatch when ifMatch (the If-Match header) is set and not the
// current revision; EValidation on "content" when the message would be
// left with neither content nor attachments; EValidation on "attachments"
// for an upload that cannot be attached (attachments.Service.Attach). An
// edit that leaves the content and the attachments as they were changes
// nothing and returns the message as it is. Errors otherwise: those of
// Store; EUnavailable when files it took off the message could not be
// deleted (the edit is applied: its retry deletes them).
func (s *Service) Edit(ctx context.Context, actor Actor, channelID, messageID string, b Body, ifMatch string) (chat.MessageView, error) {
	v, err := s.edit(ctx, actor, channelID, messageID, b, ifMatch)
	if err != nil {
		return v, err
	}
	views := []chat.MessageView{v}
	// An edit keeps the message's reactions: the answer shows them.
	if err := rooms.WithReactions(ctx, s.Reactions, rooms.ReaderOwner(actor.Type, actor.ID), views); err != nil {
		return chat.MessageView{}, err
	}
	return views[0], nil
}

func (s *Service) edit(ctx context.Context, actor Actor, channelID, messageID string, b Body, ifMatch string) (chat.MessageView, error) {
	switch {
	case !b.HasContent && !b.SetAttachments:
		return chat.MessageView{}, chat.FieldError("content", "The content field is required.")
	case b.HasContent:
		if problem := checkContent(b, b.Content, len(b.Attachments)); problem != "" {
			return chat.MessageView{}, chat.FieldError("content", problem)
		}
	}
	if len(b.Attachments) > attachments.MaxPerMessage {
		return chat.MessageView{}, chat.FieldError("attachments", fmt.Sprintf("A message carries at most %d attachments.", attachments.MaxPerMessage))
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
	if b.SetAttachments {
		return s.editAttachments(ctx, actor, channelID, messageID, b, rev)
	}
	content := b.Content
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

// editAttachments is Edit of a body with attachments. The new list is
// decided on the message as read: an upload it carries keeps its file
// (with b's alt text), a new one is checked and claimed (Attach), one
// left out is dropped. The write holds only at the revision read, so a
// change in between (an edit, a deletion) has the edit decided again.
func (s *Service) editAttachments(ctx context.Context, actor Actor, channelID, messageID string, b Body, rev int) (chat.MessageView, error) {
	for race := 0; ; race++ {
		now := s.Now().UTC()
		old, found, err := s.Store.Message(ctx, channelID, messageID)
		if err != nil {
			return chat.MessageView{}, err
		}
		if err := refusal(actor, old, found, false, rev); err != nil {
			return chat.MessageView{}, err
		}
		content := old.Content
		if b.HasContent {
			content = b.Content
		}
		if problem := messages.CheckPostContent(content, len(b.Attachments)); problem != "" {
			// The content kept must stand on its own without files.
			return chat.MessageView{}, chat.FieldError("content", problem)
		}
		next, fresh, at, dropped := plan(old.Attachments, b.Attachments)
		for j, r := range fresh {
			if slices.Contains(old.DroppedKeys, attachments.Key(actor.WorkspaceID, channelID, r.UploadID)) {
				// Its claim is this message's own and would pass, but its
				// file is being deleted: an upload is attached once.
				return chat.MessageView{}, chat.FieldError("attachments", fmt.Sprintf(
					"Attachment %d (upload %s) was removed from this message: its file is deleted.", at[j]+1, r.UploadID))
			}
		}
		if content == old.Content && len(fresh) == 0 && slices.Equal(next, old.Attachments) {
			// Nothing to change: no revision, no event, no translation;
			// files an earlier change took off are deleted now.
			if err := s.dropFiles(ctx, channelID, messageID, old.DroppedKeys); err != nil {
				return chat.MessageView{}, err
			}
			old.DroppedKeys = nil
			return chat.OriginalView(old), nil
		}
		c := Change{ChannelID: channelID, MessageID: messageID, Actor: actor, Content: content, IfMatch: rev, Now: now,
			SetAttachments: true, Base: old.Rev(), Dropped: dropped}
		var applied bool
		err = s.Attachments.Attach(ctx, actor.WorkspaceID, channelID, fresh, now, func(as []chat.Attachment) error {
			for j, a := range as {
				next[at[j]] = a
			}
			c.Attachments, c.Claims = next, as
			var err error
			_, applied, _, err = s.Store.EditMessage(ctx, c)
			return err
		})
		if err != nil {
			return chat.MessageView{}, err
		}
		if applied {
			m := Edited(old, content, now)
			m.Attachments = nil
			if len(next) > 0 {
				m.Attachments = next
			}
			m.DroppedKeys = nil
			if err := s.dropFiles(ctx, channelID, messageID, union(dropped, old.DroppedKeys)); err != nil {
				return chat.MessageView{}, err
			}
			return chat.OriginalView(m), nil
		}
		if race >= maxRaces {
			return chat.MessageView{}, chat.Unavailable(chat.Errorf(chat.EConflict, "edit of message %s kept racing", messageID))
		}
	}
}

// plan decides a message's new attachments from those it has (old) and
// the edit's refs: next, in refs' order, holds the kept ones with their
// new alt text and zero values at positions at, where the fresh uploads
// go once checked; dropped are the keys of old ones left out.
func plan(old []chat.Attachment, refs []attachments.Ref) (next []chat.Attachment, fresh []attachments.Ref, at []int, dropped []string) {
	has := make(map[string]chat.Attachment, len(old))
	for _, a := range old {
		has[a.ID] = a
	}
	wanted := make(map[string]bool, len(refs))
	next = make([]chat.Attachment, len(refs))
	for i, r := range refs {
		wanted[r.UploadID] = true
		if a, ok := has[r.UploadID]; ok {
			a.AltText = r.AltText
			next[i] = a
			continue
		}
		fresh, at = append(fresh, r), append(at, i)
	}
	for _, a := range old {
		if !wanted[a.ID] {
			dropped = append(dropped, a.Key)
		}
	}
	return next, fresh, at, dropped
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, k := range b {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// deleteAttempts bounds the attempts at deleting a change's files before
// the change answers EUnavailable (its retry finishes the job).
const deleteAttempts = 3

// dropFiles deletes the files at keys, taken off message messageID, then
// takes the keys off its DroppedKeys. It goes on past the request's
// cancellation: the message no longer shows the files, so they must go.
// Errors: EUnavailable when the files could not be deleted (the keys stay
// for a retry) or there is no bucket; those of Store.
func (s *Service) dropFiles(ctx context.Context, channelID, messageID string, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if s.Attachments == nil || s.Attachments.Objects == nil {
		return chat.Unavailable(errors.New("edits: files to delete and no bucket is configured (ATTACHMENTS_BUCKET)"))
	}
	ctx = context.WithoutCancel(ctx)
	var err error
	for attempt := 0; attempt < deleteAttempts; attempt++ {
		if attempt > 0 {
			s.pause(time.Duration(100<<(attempt-1)) * time.Millisecond)
		}
		if err = s.Attachments.Objects.Delete(ctx, keys); err == nil {
			return s.Store.ClearDroppedKeys(ctx, channelID, messageID, keys)
		}
	}
	return chat.Unavailable(fmt.Errorf("edits: files of message %s not deleted: %w", messageID, err))
}

func (s *Service) pause(d time.Duration) {
	if s.Pause != nil {
		s.Pause(d)
		return
	}
	time.Sleep(d)
}

// Delete makes message messageID of channelID a tombstone: its content and
// translations leave the store. A user deletes their own messages, an
// admin any of the workspace; a guest or webhook its own. Deleting a
// tombstone again succeeds (DELETE is idempotent) for whoever could have
// deleted it. The decisions are Edit's, without content or revision.
// An admin deleting someone else's message is written to the audit trail.
// The message's files are deleted after the write; when that fails the
// answer is EUnavailable, and the deletion's retry deletes them (their
// keys stay in the tombstone's DroppedKeys until they are gone).
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
			// The files go now: from this answer on, no path serves them.
			return s.dropFiles(ctx, channelID, messageID, c.Dropped)
		}
		if audited && found && isAuthor(actor, old) && !old.Deleted() {
			// The admin's own message: deleted without an audit event.
			audited = false
			continue
		}
		err = refusal(actor, old, found, true, 0)
		if chat.IsCode(err, chat.EMessageDeleted) {
			// Deleted before, maybe with its files still stored: a
			// retry finishes that deletion's job.
			return s.dropFiles(ctx, channelID, messageID, old.DroppedKeys)
		}
		if err != nil {
			return err
		}
		if len(old.Attachments) > 0 || len(old.DroppedKeys) > 0 {
			// A message with files: written again at the revision read,
			// recording their keys, so that they are deleted even when
			// this request dies after the write.
			c.Base, c.Dropped = old.Rev(), union(attachments.Keys(old.Attachments), old.DroppedKeys)
			if race < maxRaces {
				continue
			}
		} else if c.Base != 0 {
			// Its files went meanwhile (an edit): the common write again.
			c.Base, c.Dropped = 0, nil
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
// translations, no attachments.
func Tombstone(m chat.Message, by chat.Author, now time.Time) chat.Message {
	m.Content, m.TranslatedLanguages, m.Attachments, m.DroppedKeys = "", nil, nil, nil
	m.DeletedAt, m.DeletedBy = now, by
	return m
}
