// Package reactions is the emoji reactions on messages (contract section
// 18): which emoji a reaction may be (Parse), and the rules of adding and
// removing one (Service) above a Store.
package reactions

import (
	"context"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
)

// MaxShards is the most count shards a message's reactions are spread over.
const MaxShards = 16

// Reaction is one reader's reaction with one emoji to one message.
type Reaction struct {
	WorkspaceID string
	ChannelID   string
	MessageID   string
	// Owner is who reacted: "user:<id>" for a member, "guest:<id>" for a
	// guest (Owner).
	Owner string
	// Author is the reactor as a message's author is stored (for events).
	Author chat.Author
	// Emoji is the normalized emoji (Parse).
	Emoji string
	Now   time.Time
	// Check, when set, is called with the message as the store read it,
	// before anything is written: its error refuses the reaction (a guest
	// may react only to messages its room shows).
	Check func(chat.Message) error
}

// Owner names a reader of a reaction: the author's type and id.
func Owner(a chat.Author) string { return a.Type + ":" + a.ID }

// Outcome is what a store's Apply did.
type Outcome struct {
	// Changed is true when the reaction was added (or removed); false when
	// it already was (or was not) there, and nothing was written.
	Changed bool
	// Message is the message as read, with ReactionShards as last used
	// (after any growth).
	Message chat.Message
}

// Result is what an Add or a Remove did, and the emoji's count after an Add.
type Result struct {
	MessageID string
	Emoji     string
	Changed   bool
	Count     int
	Message   chat.Message
}

// Store keeps reactions.
type Store interface {
	// Apply adds (add) or removes r. It reads the message r names
	// consistently: absent or of another channel: ENotFound; deleted:
	// EMessageDeleted; refused by r.Check: its error; a new emoji beyond
	// chat.MaxReactionEmoji: EValidation on "emoji".
	Apply(ctx context.Context, r Reaction, add bool) (Outcome, error)
	// Counts sums the count shards of a message.
	Counts(ctx context.Context, messageID string, shards int) (map[string]int, error)
}

// Service adds and removes reactions.
type Service struct {
	Store Store
	Now   func() time.Time
}

// Target is the message a reaction is for, and who reacts.
type Target struct {
	WorkspaceID string
	ChannelID   string
	MessageID   string
	Author      chat.Author
	// Check, when set, refuses (with its error) a message the reader may
	// not see, such as what a guest's room hides.
	Check func(chat.Message) error
}

// Add parses segment and adds the reaction, then reads its count. Errors:
// ENotFound (also for a malformed message id); EValidation on "emoji";
// EMessageDeleted; the store's.
func (s *Service) Add(ctx context.Context, t Target, segment string) (Result, error) {
	return s.apply(ctx, t, segment, true)
}

// Remove parses segment and removes the reaction, with Add's errors.
func (s *Service) Remove(ctx context.Context, t Target, segment string) (Result, error) {
	return s.apply(ctx, t, segment, false)
}

func (s *Service) apply(ctx context.Context, t Target, segment string, add bool) (Result, error) {
	if !chat.ValidID(t.MessageID) {
		// A malformed id names no message (as the edit endpoints answer).
		return Result{}, chat.Errorf(chat.ENotFound, "Message not found.")
	}
	emoji, err := Parse(segment)
	if err != nil {
		return Result{}, err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	r := Reaction{WorkspaceID: t.WorkspaceID, ChannelID: t.ChannelID, MessageID: t.MessageID,
		Owner: Owner(t.Author), Author: t.Author, Emoji: emoji, Now: now().UTC(), Check: t.Check}
	o, err := s.Store.Apply(ctx, r, add)
	if err != nil {
		return Result{}, err
	}
	res := Result{MessageID: t.MessageID, Emoji: emoji, Changed: o.Changed, Message: o.Message}
	if !add {
		return res, nil
	}
	counts, err := s.Store.Counts(ctx, t.MessageID, o.Message.ReactionShards)
	if err != nil {
		return Result{}, err
	}
	res.Count = max(counts[emoji], 0)
	return res, nil
}
