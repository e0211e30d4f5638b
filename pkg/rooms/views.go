package rooms

import (
	"context"

	"github.com/chatbridge/chat/pkg/chat"
)

// ReadChannel returns up to limit messages of channelID, newest first,
// after the position after, each as a reader whose preferred language is
// tag sees it (see ViewOf). It is the one reading of a channel that guests
// (Lister) and workspace members share, so both see the same view of a
// message. It costs one query, then, when some message has a translation
// for the reader, one batch read of one translation per message, per 100
// messages. Errors: those of MessageReader.
func ReadChannel(ctx context.Context, store MessageReader, channelID, tag, after string, limit int) (chat.Page[chat.MessageView], error) {
	page, err := store.ListMessages(ctx, channelID, after, limit)
	if err != nil {
		return chat.Page[chat.MessageView]{}, err
	}
	return viewsOf(ctx, store, page, tag)
}

// ThreadLister reads a thread (contract section 18).
type ThreadLister interface {
	// ThreadOf returns the root of the thread message id of channelID
	// belongs to: its own id for a root (deleted or not), its root's for a
	// reply. Errors: ENotFound when the channel has no such message;
	// EUnavailable.
	ThreadOf(ctx context.Context, channelID, id string) (string, error)
	// ListReplies returns up to limit replies of root in channelID, oldest
	// first, after the position after. Errors: EValidation on "cursor";
	// EUnavailable.
	ListReplies(ctx context.Context, channelID, root, after string, limit int) (chat.Page[chat.Message], error)
}

// ThreadReader is what ReadThread reads: the thread and the replies'
// translations.
type ThreadReader interface {
	ThreadLister
	MessageReader
}

// ReadThread returns up to limit replies of the thread message id of
// channelID belongs to (its own for a root, its root's for a reply), oldest
// first, after the position after, each as a reader of tag sees it, as
// ReadChannel shows messages. A deleted root still lists its replies. It
// costs one consistent read of the message, one query, and the
// translations' batch reads as ReadChannel. Errors: ENotFound for a message
// that is not in the channel (a malformed id included, with no store call);
// those of ThreadReader.
func ReadThread(ctx context.Context, store ThreadReader, channelID, id, tag, after string, limit int) (chat.Page[chat.MessageView], error) {
	if !chat.ValidID(id) {
		return chat.Page[chat.MessageView]{}, chat.Errorf(chat.ENotFound, "The message was not found.")
	}
	root, err := store.ThreadOf(ctx, channelID, id)
	if err != nil {
		return chat.Page[chat.MessageView]{}, err
	}
	page, err := store.ListReplies(ctx, channelID, root, after, limit)
	if err != nil {
		return chat.Page[chat.MessageView]{}, err
	}
	return viewsOf(ctx, store, page, tag)
}

// viewsOf is page as a reader of tag sees it: one batch read of the
// translations it shows per 100 messages.
func viewsOf(ctx context.Context, store MessageReader, page chat.Page[chat.Message], tag string) (chat.Page[chat.MessageView], error) {
	var ids, langs []string
	for _, m := range page.Items {
		if lang, ok := pick(m, tag); ok {
			ids = append(ids, m.ID)
			langs = append(langs, lang)
		}
	}
	var trs map[string]map[string]chat.Translation
	if len(ids) > 0 {
		var err error
		if trs, err = store.Translations(ctx, ids, langs); err != nil {
			return chat.Page[chat.MessageView]{}, err
		}
	}
	out := chat.Page[chat.MessageView]{Next: page.Next, After: page.After, Items: make([]chat.MessageView, 0, len(page.Items))}
	for _, m := range page.Items {
		out.Items = append(out.Items, ViewOf(m, trs[m.ID], tag))
	}
	return out, nil
}
