package dynamo_test

import (
	"context"
	"fmt"
	"github.com/chatbridge/chat/internal/racetest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
)

// TestSaveRevisionAtTheTransactionLimits saves a revision's translations
// at and past TransactWriteItems' 100 items and 4 MB, on the strict local
// stack that refuses a transaction past either as DynamoDB does: 99
// translations and the message's update are one transaction; 150 are two
// (the first carrying the revision check); twelve of 380 KB in 4-byte
// emoji are two as well. Every translation is stored, the set names them
// all, and the untranslated marker is gone.
func TestSaveRevisionAtTheTransactionLimits(t *testing.T) {
	racetest.Payload(t)
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		n       int
		content string
		calls   int
	}{
		{"99 small", 99, "hola", 1},
		{"150 small", 150, "hola", 2},
		{"12 of 380 KB", 12, strings.Repeat("😀", 95_000), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			channel := chat.NewIDs().New(time.Now())
			msg := putMessage(t, store, channel)
			var ts []chat.Translation
			for i := range tc.n {
				ts = append(ts, chat.Translation{MessageID: msg, Language: fmt.Sprintf("x%03d", i), Content: tc.content,
					SourceLanguage: "en", CreatedAt: time.Now()})
			}
			st.Calls.Reset()
			if err := store.Translation.SaveRevision(ctx, channel, msg, 1, ts, true); err != nil {
				t.Fatalf("SaveRevision: %v", err)
			}
			calls := st.Calls.Calls()
			if len(calls) != tc.calls || strings.Count(strings.Join(calls, ","), "DynamoDB.TransactWriteItems") != tc.calls {
				t.Fatalf("got calls %v, want %d TransactWriteItems", calls, tc.calls)
			}
			// A Query reads at most 1 MB a page: count every page.
			stored := 0
			pages := dynamodb.NewQueryPaginator(st.DB, &dynamodb.QueryInput{TableName: aws.String(st.Table), Select: types.SelectCount, ConsistentRead: aws.Bool(true),
				KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :tr)"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(dynamo.TranslationPK(msg)), ":tr": dynamo.Str(dynamo.TranslationSK(""))}})
			for pages.HasMorePages() {
				out, err := pages.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				stored += int(out.Count)
			}
			if stored != tc.n {
				t.Fatalf("stored translations: got %d, want %d", stored, tc.n)
			}
			item, err := st.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.Table), ConsistentRead: aws.Bool(true),
				Key: dynamo.Key(dynamo.ChanPK(channel), dynamo.MessageSK(msg))})
			if err != nil {
				t.Fatal(err)
			}
			set, _ := item.Item[dynamo.AttrTranslatedLanguages].(*types.AttributeValueMemberSS)
			if set == nil || len(set.Value) != tc.n || item.Item[dynamo.AttrPendingShard] != nil {
				t.Fatalf("message item: languages %v, marker %v; want %d languages and no marker", set, item.Item[dynamo.AttrPendingShard], tc.n)
			}
		})
	}
}

// TestSaveWithoutTranslationsIsOneUpdate: a save that stores no
// translation (nobody needs one, or only the marker ends) is one
// conditional UpdateItem, half the write units of the one-item transaction
// it was; its revision condition still holds: a save for a revision an
// edit replaced changes nothing.
func TestSaveWithoutTranslationsIsOneUpdate(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	ctx := context.Background()
	channel := chat.NewIDs().New(time.Now())
	msg := putMessage(t, store, channel)
	st.Calls.Reset()
	if err := store.Translation.SaveRevision(ctx, channel, msg, 2, nil, true); err != nil {
		t.Fatal(err)
	}
	item, err := st.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.Table), ConsistentRead: aws.Bool(true),
		Key: dynamo.Key(dynamo.ChanPK(channel), dynamo.MessageSK(msg))})
	if err != nil {
		t.Fatal(err)
	}
	if item.Item[dynamo.AttrPendingShard] == nil || item.Item[dynamo.AttrTranslatedAt] != nil {
		t.Fatalf("a save of revision 2 of a revision-1 message changed it: %v", item.Item)
	}
	st.Calls.Reset()
	if err := store.Translation.SaveRevision(ctx, channel, msg, 1, nil, true); err != nil {
		t.Fatal(err)
	}
	if calls := st.Calls.Calls(); strings.Join(calls, ",") != "DynamoDB.UpdateItem" {
		t.Fatalf("calls %v, want one UpdateItem", calls)
	}
	item, err = st.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.Table), ConsistentRead: aws.Bool(true),
		Key: dynamo.Key(dynamo.ChanPK(channel), dynamo.MessageSK(msg))})
	if err != nil {
		t.Fatal(err)
	}
	if item.Item[dynamo.AttrPendingShard] != nil || item.Item[dynamo.AttrTranslatedAt] == nil {
		t.Fatalf("finished save left %v", item.Item)
	}
}
