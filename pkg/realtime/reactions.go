package realtime

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/reactions"
)

// ReactionCounted: a count shard of a message's reactions changed
// (contract section 18); Emoji names the emoji whose count changed. Every
// reader of the channel gets {"type": "reaction", "data": {"message_id",
// "emoji", "count"}} with the emoji's total count.
const ReactionCounted ChangeKind = 200

// MaxReactionShards is the most count shards a message's reactions spread
// over (contract section 18). A push reads all of them, in one batch
// read, rather than first reading the message for how many it has: one
// call instead of two, and right even while the shards grow.
const MaxReactionShards = reactions.MaxShards

// ReactionCounter reads a message's reaction counts, the sums over its
// first shards count shards, by emoji (reactionstore.Store).
type ReactionCounter interface {
	Counts(ctx context.Context, messageID string, shards int) (map[string]int, error)
}

// reactionFrame is the push of emoji's count on message id.
func reactionFrame(id, emoji string, count int) []byte {
	data, _ := json.Marshal(struct {
		MessageID string `json:"message_id"`
		Emoji     string `json:"emoji"`
		Count     int    `json:"count"`
	}{id, emoji, count})
	b, _ := json.Marshal(frame{Type: "reaction", Data: data})
	return b
}

// reactionSends are the pushes of a reaction change: the emoji's total
// count (read once per message per batch: counts caches it), to every
// connection of the channel.
func (p *Pusher) reactionSends(ctx context.Context, c Change, conns []Connection, counts map[string]map[string]int) ([]send, error) {
	if len(c.Emoji) == 0 || p.Reactions == nil {
		return nil, nil
	}
	n, ok := counts[c.Message.ID]
	if !ok {
		var err error
		if n, err = p.Reactions.Counts(ctx, c.Message.ID, MaxReactionShards); err != nil {
			return nil, err
		}
		counts[c.Message.ID] = n
	}
	b := reactionFrame(c.Message.ID, c.Emoji[0], max(n[c.Emoji[0]], 0))
	sends := make([]send, 0, len(conns))
	for _, conn := range conns {
		sends = append(sends, send{conn: conn, data: b})
	}
	return sends, nil
}

// withCounts sets the reactions of v, a view pushed to every reader of a
// language alike, from the message's counts: Me is false (clients keep
// their own from their actions). No read for a message without
// reactions.
func (p *Pusher) withCounts(ctx context.Context, v chat.MessageView, counts map[string]map[string]int) (chat.MessageView, error) {
	m := v.Message
	if p.Reactions == nil || len(m.ReactionEmoji) == 0 || m.Deleted() {
		return v, nil
	}
	n, ok := counts[m.ID]
	if !ok {
		var err error
		if n, err = p.Reactions.Counts(ctx, m.ID, max(m.ReactionShards, 1)); err != nil {
			return v, err
		}
		counts[m.ID] = n
	}
	v.Reactions = nil
	for _, e := range m.ReactionEmoji {
		if n[e] > 0 && !slices.ContainsFunc(v.Reactions, func(r chat.Reaction) bool { return r.Emoji == e }) {
			v.Reactions = append(v.Reactions, chat.Reaction{Emoji: e, Count: n[e]})
		}
	}
	return v, nil
}
