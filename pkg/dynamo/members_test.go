package dynamo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/members"
)

func memberMessage(ids *chat.IDs, now time.Time, content string) chat.Message {
	return chat.Message{ID: ids.New(now), WorkspaceID: demoWorkspace, ChannelID: demoSupport,
		Author:  chat.Author{Type: chat.AuthorUser, ID: demoAna, Name: "Ana", Language: "es-ES"},
		Content: content, SourceLanguage: "es-ES", Status: chat.MessageQueued, CreatedAt: now}
}

// TestPostMemberMessageKeys: a live record replays with one call and no
// write; an expired one is taken over; the record keeps the whole message,
// 40,000 four-byte characters included.
func TestPostMemberMessageKeys(t *testing.T) {
	st, s := newApplyStore(t)
	ctx := context.Background()
	ids := chat.NewIDs()
	now := time.Now().UTC()
	big := strings.Repeat("😀", 40000)
	m := memberMessage(ids, now, big)
	key := &members.KeyRecord{UserID: demoAna, KeyHash: strings.Repeat("a", 64), Fingerprint: "fp1", ExpiresAt: now.Add(24 * time.Hour), Message: m}
	if held, err := s.Members.PostMemberMessage(ctx, m, key, now); err != nil || held != nil {
		t.Fatalf("first post: %v %v, want stored", held, err)
	}
	st.Calls.Reset()
	m2 := memberMessage(ids, now, "other")
	held, err := s.Members.PostMemberMessage(ctx, m2, &members.KeyRecord{UserID: demoAna, KeyHash: key.KeyHash, Fingerprint: "fp2", ExpiresAt: now.Add(24 * time.Hour), Message: m2}, now)
	if err != nil || held == nil || held.Fingerprint != "fp1" || held.Message.ID != m.ID || held.Message.Content != big {
		t.Fatalf("held: %+v %v, want the first record with its whole message", held, err)
	}
	if n := st.Calls.Total(); n != 1 {
		t.Fatalf("replay: %d calls %v, want 1", n, st.Calls.Calls())
	}
	if got := len(scanPrefix(t, st, "MSG#")); got != 1 {
		t.Fatalf("%d messages, want 1", got)
	}
	// A day later the key is free again.
	later := now.Add(25 * time.Hour)
	m3 := memberMessage(ids, later, "later")
	if held, err := s.Members.PostMemberMessage(ctx, m3, &members.KeyRecord{UserID: demoAna, KeyHash: key.KeyHash, Fingerprint: "fp3", ExpiresAt: later.Add(24 * time.Hour), Message: m3}, later); err != nil || held != nil {
		t.Fatalf("after expiry: %v %v, want stored", held, err)
	}
}

// TestCloseRoomOfAnOlderApply: a room without its workspace list entry (as
// stored before the list existed) closes without a half-empty entry being
// created, and its channel item stops making its guests readers.
func TestCloseRoomOfAnOlderApply(t *testing.T) {
	st, s := newApplyStore(t)
	ctx := context.Background()
	apply(t, s, demo(t), time.Now())
	for k := range scanPrefix(t, st, "ROOM#") {
		pk, sk, _ := strings.Cut(k, "|")
		if strings.HasPrefix(pk, "WS#") {
			if _, err := st.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(st.Table), Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	r, err := s.Rooms.ManagedRoom(ctx, demoCall)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Rooms.CloseRoom(ctx, r); err != nil {
		t.Fatalf("close: %v", err)
	}
	items := scan(t, st)
	if items["ROOM#"+demoCall+"|#META"]["status"] != "closed" || items["CHAN#"+demoSupport+"|ROOM#"+demoCall]["status"] != "closed" {
		t.Fatalf("room items not closed")
	}
	for k := range items {
		if strings.HasPrefix(k, "WS#") && strings.Contains(k, "|ROOM#") {
			t.Fatalf("close created list entry %s", k)
		}
	}
	if _, err := s.Rooms.ManagedRoom(ctx, "01JDZ8Y7K3Q4W5E6R7T8Y9A0ZZ"); !chat.IsCode(err, chat.ENotFound) {
		t.Fatalf("unknown room: %v, want not found", err)
	}
}

// scanPrefix returns the items whose sk starts with prefix, by "pk|sk".
func scanPrefix(t *testing.T, st *stacktest.Stack, prefix string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for k := range scan(t, st) {
		if _, sk, _ := strings.Cut(k, "|"); strings.HasPrefix(sk, prefix) {
			out[k] = true
		}
	}
	return out
}
