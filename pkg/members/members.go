package members

import (
	"context"
	"time"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// Bounds of the Idempotency-Key (contract section 4, step 6).
const (
	IdempotencyTTL    = 24 * time.Hour
	MaxIdempotencyKey = chat.MaxIdempotencyKeyLen
)

// Channel is a channel as its members list it.
type Channel struct {
	ID          string
	WorkspaceID string
	Name        string
	CreatedAt   time.Time
}

// ChannelStore lists the channels of a user.
type ChannelStore interface {
	// MemberChannels returns up to limit channels that user of workspace
	// is a member of, oldest first, after the position after ("" for the
	// first page). Errors: EValidation on "cursor" for a position that is
	// not a channel's; EUnavailable.
	MemberChannels(ctx context.Context, workspaceID, userID, after string, limit int) (chat.Page[Channel], error)
}

// KeyRecord is what an Idempotency-Key of a member holds: the request's
// fingerprint and the message the request posted.
type KeyRecord struct {
	UserID      string
	KeyHash     string
	Fingerprint string
	ExpiresAt   time.Time
	Message     chat.Message
}

// PostStore stores a member's message.
type PostStore interface {
	// PostMemberMessage stores m; with key, it also stores the key's
	// record, in the same write, unless a live record (ExpiresAt after now)
	// holds the key: then nothing is written and that record is returned.
	// Errors: EIdempotencyKeyInUse when concurrent requests with the key
	// kept colliding; EConflict when a message with m's id exists;
	// EUnavailable.
	PostMemberMessage(ctx context.Context, m chat.Message, key *KeyRecord, now time.Time) (*KeyRecord, error)
	// ThreadRoot finds a reply's root (messages.ThreadReader).
	messages.ThreadReader
}

// Service serves the members' channels and messages.
type Service struct {
	Channels ChannelStore
	Messages rooms.MessageReader
	// Reactions reads a page's reactions; nil shows none.
	Reactions rooms.ReactionReader
	Posts     PostStore
	// Attachments checks and attaches a post's files; nil refuses a post
	// with attachments (503).
	Attachments *attachments.Service
	IDs         *chat.IDs
	Now         chat.Clock
}

// ListChannels returns a page of the channels p is a member of, oldest
// first. Errors: those of ChannelStore.
func (s *Service) ListChannels(ctx context.Context, p workspaces.Principal, after string, limit int) (chat.Page[Channel], error) {
	return s.Channels.MemberChannels(ctx, p.WorkspaceID, p.UserID, after, limit)
}

// ListMessages returns a page of channelID's messages, newest first, each
// as p reads it in p's preferred language: the view a guest of the same
// language sees. Errors: EForbidden when p is not a member of channelID
// (which includes a channel of another workspace and a malformed id), with
// no store call; those of rooms.MessageReader.
func (s *Service) ListMessages(ctx context.Context, p workspaces.Principal, channelID, after string, limit int) (chat.Page[chat.MessageView], error) {
	if !p.MemberOf(channelID) {
		return chat.Page[chat.MessageView]{}, workspaces.ErrForbidden()
	}
	page, err := rooms.ReadChannel(ctx, s.Messages, channelID, p.PreferredLanguage, after, limit)
	if err != nil {
		return page, err
	}
	return page, rooms.WithReactions(ctx, s.Reactions, rooms.ReaderOwner(chat.AuthorUser, p.UserID), page.Items)
}

// Post is a member's new message.
type Post struct {
	ChannelID       string
	Content         string
	SkipTranslation bool
	Attachments     []attachments.Ref
	// ThreadID is the message the post replies to, "" for a root.
	ThreadID string
	// Key is the Idempotency-Key header when HasKey.
	Key    string
	HasKey bool
}

// Posted is the result of a post: the message as its author reads it (the
// original), and whether it is the replay of an earlier request.
type Posted struct {
	View     chat.MessageView
	Replayed bool
}

// Post stores a message by p in post.ChannelID. The decisions, in order:
// EForbidden when p is not a member of the channel; EValidation on
// "content" (messages.CheckContent); EInvalidIdempotencyKey for a key that
// is not 1–255 printable ASCII characters. With a key held by a live
// record of p: the same request (channel, content, skip_translation)
// replays the recorded message and posts nothing; another request is
// EIdempotencyKeyReused. Errors otherwise: those of PostStore.
func (s *Service) Post(ctx context.Context, p workspaces.Principal, post Post) (Posted, error) {
	if !p.MemberOf(post.ChannelID) {
		return Posted{}, workspaces.ErrForbidden()
	}
	if problem := messages.CheckPostContent(post.Content, len(post.Attachments)); problem != "" {
		return Posted{}, chat.FieldError("content", problem)
	}
	if post.HasKey && !chat.ValidIdempotencyKey(post.Key) {
		return Posted{}, chat.Errorf(chat.EInvalidIdempotencyKey, "The Idempotency-Key header must be 1 to 255 printable ASCII characters.")
	}
	root, err := messages.Thread(ctx, s.Posts, post.ChannelID, post.ThreadID)
	if err != nil {
		return Posted{}, err
	}
	now := s.Now().UTC()
	m := chat.Message{
		ThreadID:    root,
		ID:          s.IDs.New(now),
		WorkspaceID: p.WorkspaceID,
		ChannelID:   post.ChannelID,
		Author: chat.Author{
			Type: chat.AuthorUser, ID: p.UserID, Name: p.Name, Language: p.PreferredLanguage,
		},
		Content:         post.Content,
		SkipTranslation: post.SkipTranslation,
		SourceLanguage:  p.PreferredLanguage,
		Status:          chat.MessageQueued,
		CreatedAt:       now,
	}
	var key *KeyRecord
	if post.HasKey {
		key = &KeyRecord{UserID: p.UserID, KeyHash: chat.HashIdempotencyKey(post.Key), Fingerprint: Fingerprint(post),
			ExpiresAt: now.Add(IdempotencyTTL)}
	}
	var held *KeyRecord
	err = s.Attachments.Attach(ctx, m.WorkspaceID, m.ChannelID, post.Attachments, now, func(as []chat.Attachment) error {
		m.Attachments = as
		if key != nil {
			key.Message = m
		}
		var err error
		held, err = s.Posts.PostMemberMessage(ctx, m, key, now)
		return err
	})
	if err != nil {
		return Posted{}, err
	}
	if held != nil {
		if held.Fingerprint != key.Fingerprint {
			return Posted{}, chat.Errorf(chat.EIdempotencyKeyReused, "This Idempotency-Key was already used with a different request.")
		}
		return Posted{View: chat.OriginalView(held.Message), Replayed: true}, nil
	}
	return Posted{View: chat.OriginalView(m)}, nil
}

// Fingerprint identifies "the same request" for a key: channel, content
// and skip_translation (contract section 9), attachments and thread.
func Fingerprint(p Post) string {
	parts := attachments.Parts(p.Attachments)
	if p.ThreadID != "" {
		parts = append(parts, "thread:"+p.ThreadID)
	}
	return chat.IdempotencyFingerprint(p.ChannelID, p.Content, p.SkipTranslation, parts...)
}
