package relaystore

import (
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/dynamo/reactionstore"
)

// ChangeReaction is a reader item of reactions changing (contract section
// 18): the emoji its owner added and removed.
const ChangeReaction = "reaction"

// readerPrefix starts a reactions reader item's partition key: pk
// RXR#<message>#<hh>, sk <owner> (reactionstore's layout).
const readerPrefix = reactionstore.ReaderPrefix

// Reaction is a ChangeReaction: who (Author) added and removed which
// emoji on which message, and when (the item's updated_at, else the
// record's time).
type Reaction struct {
	MessageID   string
	ChannelID   string
	WorkspaceID string
	Owner       string
	Author      chat.Author
	Added       []string
	Removed     []string
	At          time.Time
}

// readerAuthor is the reader item's author attribute, stored as a
// message's author is.
type readerAuthor struct {
	Type string `dynamodbav:"type"`
	ID   string `dynamodbav:"id"`
	Name string `dynamodbav:"name"`
}

// ReactionChangeOf reads a stream record of a reactions reader item
// (INSERT, MODIFY or REMOVE, with its old and new images): the emoji in
// the new image's set and not the old's are added, the reverse removed.
// False for another item, or when the sets are the same.
func ReactionChangeOf(eventName string, oldImage, newImage map[string]types.AttributeValue, at time.Time) (Change, bool) {
	image := newImage
	if eventName == "REMOVE" || len(image) == 0 {
		image = oldImage
	}
	if !strings.HasPrefix(dynamo.GetS(image, dynamo.AttrPK), readerPrefix) {
		return Change{}, false
	}
	var before, after []string
	if eventName != "INSERT" {
		before = emojiSet(oldImage)
	}
	if eventName != "REMOVE" {
		after = emojiSet(newImage)
	}
	r := Reaction{MessageID: dynamo.GetS(image, "message_id"), ChannelID: dynamo.GetS(image, "channel_id"),
		WorkspaceID: dynamo.GetS(image, "workspace_id"), Owner: dynamo.GetS(image, dynamo.AttrSK), At: at}
	for _, e := range after {
		if !slices.Contains(before, e) {
			r.Added = append(r.Added, e)
		}
	}
	for _, e := range before {
		if !slices.Contains(after, e) {
			r.Removed = append(r.Removed, e)
		}
	}
	if (len(r.Added) == 0 && len(r.Removed) == 0) || !chat.ValidID(r.MessageID) || r.WorkspaceID == "" {
		return Change{}, false
	}
	var a readerAuthor
	if av, ok := image["author"]; ok {
		_ = attributevalue.Unmarshal(av, &a)
	}
	r.Author = chat.Author{Type: a.Type, ID: a.ID, Name: a.Name}
	if t, err := time.Parse(time.RFC3339Nano, dynamo.GetS(image, "updated_at")); err == nil && eventName != "REMOVE" {
		r.At = t
	}
	return Change{Kind: ChangeReaction, Reaction: r, WorkspaceID: r.WorkspaceID}, true
}

// emojiSet is an image's emoji string set, sorted (nil when absent).
func emojiSet(image map[string]types.AttributeValue) []string {
	ss, ok := image["emoji"].(*types.AttributeValueMemberSS)
	if !ok {
		return nil
	}
	out := slices.Clone(ss.Value)
	slices.Sort(out)
	return out
}
