package connstore_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/dynamo/connstore"
	"github.com/chatbridge/chat/pkg/realtime"
)

const (
	msgID  = "01JMSG00000000000000000000"
	chanID = "01JCHAN0000000000000000000"
)

func image(t *testing.T, m chat.Message) map[string]types.AttributeValue {
	t.Helper()
	it := dynamo.MessageItemOf(m)
	it.ReactionEmoji, it.ReactionShards, it.ReplyCount = m.ReactionEmoji, m.ReactionShards, m.ReplyCount
	if !m.LastReplyAt.IsZero() {
		it.LastReplyAt = &m.LastReplyAt
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		t.Fatal(err)
	}
	return av
}

// TestBookkeepingModifyPushesNothing: a message MODIFY that registers a
// reaction's emoji, grows its shards or counts a thread reply is a
// MessageChanged (not an edit), and pushes nothing to a connected reader.
func TestBookkeepingModifyPushesNothing(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	before := chat.Message{ID: msgID, WorkspaceID: "01JWS000000000000000000000", ChannelID: chanID, Content: "hi", SourceLanguage: "en",
		Author: chat.Author{Type: chat.AuthorBot, Name: "CI"}, Status: chat.MessageQueued, CreatedAt: at}
	after := before
	after.ReactionEmoji, after.ReactionShards, after.ReplyCount, after.LastReplyAt = []string{"👍"}, 2, 1, at
	oldImage, newImage := image(t, before), image(t, after)
	if _, ok := newImage[dynamo.AttrReactionEmoji]; !ok || reflect.DeepEqual(oldImage, newImage) {
		t.Fatalf("the images do not differ by the bookkeeping: %v", newImage)
	}
	c, ok := connstore.RealtimeChange("MODIFY", oldImage, newImage)
	if !ok || c.Kind != realtime.MessageChanged {
		t.Fatalf("change %+v %v, want a MessageChanged", c, ok)
	}
	store := &conns{list: []realtime.Connection{{ID: "c1", ChannelID: chanID, Kind: realtime.KindMember, SubjectID: "U1", Language: "en", ExpiresAt: at.Add(time.Hour)}}}
	sender := &sends{}
	p := &realtime.Pusher{Store: store, Translations: noTr{}, Sender: sender, Encode: func(chat.MessageView) ([]byte, error) { return []byte("{}"), nil },
		Now: func() time.Time { return at }}
	if err := p.Push(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if sender.n != 0 {
		t.Errorf("a bookkeeping MODIFY pushed %d frames, want none", sender.n)
	}
}

// TestReactionShardChange: a count shard's record names the emoji whose
// count changed, and nothing for a write that changed none.
func TestReactionShardChange(t *testing.T) {
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	old := map[string]types.AttributeValue{"pk": s("RXC#" + msgID + "#3"), "sk": s("C"), "message_id": s(msgID), "channel_id": s(chanID), "n:👍": n("2"), "n:🎉": n("1")}
	cur := map[string]types.AttributeValue{"pk": s("RXC#" + msgID + "#3"), "sk": s("C"), "message_id": s(msgID), "channel_id": s(chanID), "n:👍": n("3"), "n:🎉": n("1"), "n:👀": n("1")}
	c, ok := connstore.RealtimeChange("MODIFY", old, cur)
	if !ok || c.Kind != realtime.ReactionCounted || c.Message.ID != msgID || c.Message.ChannelID != chanID || !reflect.DeepEqual(c.Emoji, []string{"👀", "👍"}) {
		t.Fatalf("change %+v %v, want 👀 and 👍 of %s", c, ok, msgID)
	}
	if c, ok := connstore.RealtimeChange("INSERT", nil, cur); !ok || len(c.Emoji) != 3 {
		t.Fatalf("insert: %+v %v, want all three emoji", c, ok)
	}
	if c, ok := connstore.RealtimeChange("MODIFY", cur, cur); ok {
		t.Fatalf("a write that changed no count: %+v", c)
	}
}

type conns struct{ list []realtime.Connection }

func (c *conns) Connections(_ context.Context, ch string, now time.Time) ([]realtime.Connection, error) {
	return c.list, nil
}
func (c *conns) PutConnection(context.Context, realtime.Connection) error { return nil }
func (c *conns) DeleteConnection(context.Context, string, string) error   { return nil }

type sends struct{ n int }

func (s *sends) Send(context.Context, string, []byte) error { s.n++; return nil }
func (s *sends) Close(context.Context, string) error        { return nil }

type noTr struct{}

func (noTr) Translations(context.Context, []string, []string) (map[string]map[string]chat.Translation, error) {
	return nil, nil
}
