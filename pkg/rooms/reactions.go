package rooms

import (
	"context"

	"github.com/chatbridge/chat/pkg/chat"
)

// ReactionReader reads the reactions of messages as one reader sees them
// (reactionstore.Store): per message id, its reactions with a count above
// zero in order of first use, Me for reader (an owner: "user:<id>" or
// "guest:<id>", as attachments.Owner). It reads only messages with
// ReactionEmoji, in one batch read per 100 keys.
type ReactionReader interface {
	Reactions(ctx context.Context, reader string, msgs []chat.Message) (map[string][]chat.Reaction, error)
}

// ReaderOwner is the owner of a reader's reactions: "user:<id>" for a
// member, "guest:<id>" for a guest (contract section 18).
func ReaderOwner(kind, id string) string { return kind + ":" + id }

// WithReactions sets the Reactions of views as reader sees them, with one
// call of rx for the messages that have reactions (ReactionEmoji) and are
// not deleted; no call when none has, or when rx is nil (reactions then
// stay nil: none). A deleted message shows none.
func WithReactions(ctx context.Context, rx ReactionReader, reader string, views []chat.MessageView) error {
	if rx == nil {
		return nil
	}
	var msgs []chat.Message
	for _, v := range views {
		if len(v.Message.ReactionEmoji) > 0 && !v.Message.Deleted() {
			msgs = append(msgs, v.Message)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	got, err := rx.Reactions(ctx, reader, msgs)
	if err != nil {
		return err
	}
	for i := range views {
		if !views[i].Message.Deleted() {
			views[i].Reactions = got[views[i].Message.ID]
		}
	}
	return nil
}
