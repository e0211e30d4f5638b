package dynamo_test

import (
	"context"
	"net/http"
	"reflect"
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
	"github.com/chatbridge/chat/pkg/inbound"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/translation"
)

// TestBothWritersMarkTheMessage: a message accepted by the inbound
// transaction and one posted by a guest both carry the untranslated marker
// from their first write, and the sweep's index lists them once due; a
// skip_translation message carries none.
func TestBothWritersMarkTheMessage(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	ctx := context.Background()
	ids := chat.NewIDs()
	now := time.Now()
	channel, ws := ids.New(now), ids.New(now)
	message := func(skip bool) chat.Message {
		return chat.Message{ID: ids.New(now), WorkspaceID: ws, ChannelID: channel, Author: chat.Author{Type: chat.AuthorBot, Name: "Bot"},
			Content: "Hello", SourceLanguage: "en", SkipTranslation: skip, Status: chat.MessageQueued, CreatedAt: now}
	}
	accepted, posted, skipped := message(false), message(false), message(true)
	if _, _, err := store.Inbound.Accept(ctx, inbound.Acceptance{Message: accepted, Status: http.StatusAccepted, Body: []byte(`{}`),
		Log: chat.RequestLog{ID: ids.New(now), WorkspaceID: ws, WebhookID: ids.New(now), ReceivedAt: now, Status: http.StatusAccepted,
			Outcome: chat.OutcomeAccepted, MessageID: accepted.ID}}, now); err != nil {
		t.Fatalf("accept: %v", err)
	}
	for _, m := range []chat.Message{posted, skipped} {
		if err := store.PutMessage(ctx, m); err != nil {
			t.Fatalf("put message: %v", err)
		}
	}
	for _, tc := range []struct {
		m      chat.Message
		marked bool
	}{{accepted, true}, {posted, true}, {skipped, false}} {
		out, err := st.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &st.Table, ConsistentRead: aws.Bool(true), Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "CHAN#" + channel}, "sk": &types.AttributeValueMemberS{Value: "MSG#" + tc.m.ID}}})
		if err != nil {
			t.Fatal(err)
		}
		shard, _ := out.Item["pending_shard"].(*types.AttributeValueMemberS)
		due, _ := out.Item["pending_due"].(*types.AttributeValueMemberS)
		if got := shard != nil && due != nil; got != tc.marked {
			t.Fatalf("message %s (skip %v): marked %v, want %v", tc.m.ID, tc.m.SkipTranslation, got, tc.marked)
		}
		if tc.marked && (!strings.HasPrefix(shard.Value, "PENDING#") || !strings.HasSuffix(due.Value, "#"+tc.m.ID)) {
			t.Fatalf("marker %q %q, want PENDING#nn and <due>#<id>", shard.Value, due.Value)
		}
	}

	if due, err := store.Translation.DuePending(ctx, now.Add(dynamo.PendingGrace-time.Second), 100); err != nil || len(due) != 0 {
		t.Fatalf("due within the grace period: %+v %v, want none", due, err)
	}
	st.Calls.Reset()
	due, err := store.Translation.DuePending(ctx, now.Add(dynamo.PendingGrace+time.Second), 100)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Calls.Total(); n != dynamo.PendingShards {
		t.Fatalf("DuePending made %d calls, want %d (one Query per shard)", n, dynamo.PendingShards)
	}
	got := map[string]messages.Job{}
	for _, p := range due {
		if p.Attempts != 0 || p.Version == "" {
			t.Fatalf("pending %+v, want no attempts yet and a version", p)
		}
		got[p.Job.MessageID] = p.Job
	}
	want := map[string]messages.Job{
		accepted.ID: {MessageID: accepted.ID, WorkspaceID: ws, ChannelID: channel, SourceLanguage: "en"},
		posted.ID:   {MessageID: posted.ID, WorkspaceID: ws, ChannelID: channel, SourceLanguage: "en"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("due:\ngot  %+v\nwant %+v", got, want)
	}
	// Limit bounds a run.
	if due, err := store.Translation.DuePending(ctx, now.Add(time.Hour), 1); err != nil || len(due) != 1 {
		t.Fatalf("DuePending with limit 1: %d, %v", len(due), err)
	}
}

// TestOversizedTranslationItemIsRefused: an item past 400 KB is an internal
// error before any call, never a write DynamoDB would refuse.
func TestOversizedTranslationItemIsRefused(t *testing.T) {
	st := stacktest.New(t)
	store := storetest.New(st.DB, st.Table)
	channel := chat.NewIDs().New(time.Now())
	msg := putMessage(t, store, channel)
	st.Calls.Reset()
	err := store.Translation.SaveTranslations(context.Background(), channel, msg,
		[]chat.Translation{{MessageID: msg, Language: "es", Content: strings.Repeat("😀", 100<<10)}}, true)
	if !chat.IsCode(err, chat.EInternal) || st.Calls.Total() != 0 {
		t.Fatalf("400 KB translation: %v after %d calls, want EInternal and no call", err, st.Calls.Total())
	}
	// At the domain's bound it fits.
	if err := store.Translation.SaveTranslations(context.Background(), channel, msg,
		[]chat.Translation{{MessageID: msg, Language: "es", Content: strings.Repeat("a", translation.MaxTranslationBytes)}}, true); err != nil {
		t.Fatalf("translation of MaxTranslationBytes: %v", err)
	}
}
