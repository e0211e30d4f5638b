package messages

import (
	"context"
	"encoding/json"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
)

// ThreadReader finds the root of the thread a reply joins (contract
// section 18).
type ThreadReader interface {
	// ThreadRoot returns the id of the root of the thread that a reply to
	// message id of channelID joins: id itself for a root, the root of
	// id's thread for a reply (threads are one level deep). Errors:
	// EValidation on "thread_id" when no such message is in the channel or
	// it is a deleted root; EUnavailable.
	ThreadRoot(ctx context.Context, channelID, id string) (string, error)
}

// ThreadInvalid is the answer on "thread_id" to a value that is not a
// message id.
const ThreadInvalid = "The thread id must be a message id."

// ThreadField reads a post's optional "thread_id": "" when absent or null
// (a root); a value that is not a string holding a well-formed message id
// (chat.ValidID) adds a problem to v.
func ThreadField(obj jsonbody.Object, v *chat.Validation) string {
	if obj.IsNull("thread_id") {
		return ""
	}
	var id string
	if err := json.Unmarshal(obj["thread_id"], &id); err != nil || !chat.ValidID(id) {
		v.Add("thread_id", ThreadInvalid)
		return ""
	}
	return id
}

// Thread returns the root a post to channelID with thread_id threadID
// ("" for a root) is stored under: "" for a root, else the root that
// r.ThreadRoot finds (one read). Errors: those of ThreadReader.
func Thread(ctx context.Context, r ThreadReader, channelID, threadID string) (string, error) {
	if threadID == "" {
		return "", nil
	}
	if !chat.ValidID(threadID) {
		return "", chat.FieldError("thread_id", ThreadInvalid)
	}
	return r.ThreadRoot(ctx, channelID, threadID)
}
