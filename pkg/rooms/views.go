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
	var ids, langs []string
	for _, m := range page.Items {
		if lang, ok := pick(m, tag); ok {
			ids = append(ids, m.ID)
			langs = append(langs, lang)
		}
	}
	var trs map[string]map[string]chat.Translation
	if len(ids) > 0 {
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
