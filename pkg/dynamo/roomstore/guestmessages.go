package roomstore

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/rooms"
)

var (
	_ rooms.MessageWriter = (*Store)(nil)
	_ rooms.MessageReader = (*Store)(nil)
)

// ListMessages implements rooms.MessageReader with Queries of the
// channel's partition (dynamo.ListPage), newest first, roots only (a
// filter leaves the replies out; the page is read on until full). Each message carries the
// languages its translations are stored in (translated_languages). Errors:
// EValidation on "cursor" for a position that is not a message's;
// EUnavailable when DynamoDB failed after retries.
func (s *Store) ListMessages(ctx context.Context, channelID, after string, limit int) (chat.Page[chat.Message], error) {
	q := dynamo.ListQuery{Op: "list messages " + channelID, PK: dynamo.ChanPK(channelID), Prefix: dynamo.MessagePrefix,
		Filter: "attribute_not_exists(" + dynamo.AttrThreadID + ")"}
	return dynamo.ListPage(ctx, s.Table, q, after, limit, dynamo.MessageItem.Message)
}

// ListReplies implements rooms.ThreadReader with Queries of the sparse
// index ThreadIndex (the replies of root, oldest first), as many as a
// page takes. Errors: EValidation on "cursor" for a position that is not a
// message's; EUnavailable.
func (s *Store) ListReplies(ctx context.Context, channelID, rootID, after string, limit int) (chat.Page[chat.Message], error) {
	q := dynamo.ListQuery{Op: "list replies " + rootID, PK: rootID, Prefix: dynamo.MessagePrefix, Forward: true,
		Index: dynamo.ThreadIndex, IndexPK: dynamo.AttrThreadID, TablePK: dynamo.ChanPK(channelID)}
	return dynamo.ListPage(ctx, s.Table, q, after, limit, dynamo.MessageItem.Message)
}

// Translations implements rooms.MessageReader with one BatchGetItem per
// 100 (message, language) pairs, run concurrently. Errors: EInternal when
// messageIDs and languages differ in length; EUnavailable when DynamoDB
// failed after retries.
func (s *Store) Translations(ctx context.Context, messageIDs, languages []string) (map[string]map[string]chat.Translation, error) {
	if len(messageIDs) != len(languages) {
		return nil, chat.Internal(fmt.Errorf("dynamo: get translations: %d message ids for %d languages", len(messageIDs), len(languages)))
	}
	// BatchGetItem refuses a request that names one key twice.
	seen := map[[2]string]bool{}
	var keys []map[string]types.AttributeValue
	for i, id := range messageIDs {
		pair := [2]string{id, languages[i]}
		if seen[pair] {
			continue
		}
		seen[pair] = true
		keys = append(keys, dynamo.Key(dynamo.TranslationPK(id), dynamo.TranslationSK(languages[i])))
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
		out      = map[string]map[string]chat.Translation{}
	)
	for start := 0; start < len(keys); start += dynamo.TranslationBatch {
		chunk := keys[start:min(start+dynamo.TranslationBatch, len(keys))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			items, err := s.BatchGet(ctx, "get translations", chunk)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			for _, av := range items {
				var it dynamo.TranslationItem
				if err := attributevalue.UnmarshalMap(av, &it); err != nil {
					if firstErr == nil {
						firstErr = chat.Internal(err)
					}
					return
				}
				// The keys, not the attributes, say what was asked for.
				id := strings.TrimPrefix(it.PK, dynamo.TranslationPK(""))
				lang := strings.TrimPrefix(it.SK, dynamo.TranslationSK(""))
				if out[id] == nil {
					out[id] = map[string]chat.Translation{}
				}
				tr := it.Translation()
				tr.MessageID, tr.Language = id, lang
				out[id][lang] = tr
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}
