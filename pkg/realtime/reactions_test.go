package realtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/realtime"
)

type fakeCounter struct {
	mu     sync.Mutex
	calls  int
	shards []int
	counts map[string]int
}

func (f *fakeCounter) Counts(_ context.Context, _ string, shards int) (map[string]int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.shards = append(f.shards, shards)
	return f.counts, nil
}

// TestReactionPushCoalesced: a batch of 20 count shard records of one
// message (17 of 👍, 3 of them also of 🎉) reaches a connected member and
// a guest once per emoji, with the total count read once for the batch,
// over all 16 possible shards.
func TestReactionPushCoalesced(t *testing.T) {
	store := &fakeStore{conns: []realtime.Connection{
		{ID: "member", ChannelID: chanID, Kind: realtime.KindMember, SubjectID: "U1", Language: "en", ExpiresAt: t0.Add(time.Hour)},
		{ID: "guest", ChannelID: chanID, Kind: realtime.KindGuest, SubjectID: "G1", RoomID: "R1", Language: "es", ExpiresAt: t0.Add(time.Hour)},
		{ID: "other", ChannelID: "01JOTHER000000000000000000", Kind: realtime.KindMember, SubjectID: "U2", Language: "en", ExpiresAt: t0.Add(time.Hour)},
	}}
	sender := &fakeSender{}
	counter := &fakeCounter{counts: map[string]int{"👍": 20, "🎉": 3}}
	p := &realtime.Pusher{Store: store, Translations: &fakeTranslations{}, Sender: sender, Encode: encode, Now: func() time.Time { return t0 }, Reactions: counter}
	var changes []realtime.Change
	for i := range 20 {
		emoji := []string{"👍"}
		if i >= 17 {
			emoji = []string{"🎉"}
		}
		changes = append(changes, realtime.Change{Key: fmt.Sprint("rec", i), Kind: realtime.ReactionCounted,
			Message: chat.Message{ID: "01JMSG00000000000000000000", ChannelID: chanID}, Emoji: emoji})
	}
	if n, err := p.PushAll(context.Background(), changes); err != nil || n != 20 {
		t.Fatalf("PushAll = %d, %v; want 20, nil", n, err)
	}
	if counter.calls != 1 || counter.shards[0] != realtime.MaxReactionShards {
		t.Errorf("Counts calls %d with shards %v, want 1 of %d", counter.calls, counter.shards, realtime.MaxReactionShards)
	}
	for _, id := range []string{"member", "guest"} {
		got := sender.sent[id]
		if len(got) != 2 {
			t.Fatalf("%s got %d pushes %v, want 2 (one per emoji)", id, len(got), got)
		}
		want := map[string]int{"👍": 20, "🎉": 3}
		for _, b := range got {
			var f struct {
				Type string `json:"type"`
				Data struct {
					MessageID string `json:"message_id"`
					Emoji     string `json:"emoji"`
					Count     int    `json:"count"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(b), &f); err != nil {
				t.Fatal(err)
			}
			if f.Type != "reaction" || f.Data.MessageID != "01JMSG00000000000000000000" || want[f.Data.Emoji] != f.Data.Count {
				t.Errorf("%s got %s, want a reaction push of the total", id, b)
			}
			delete(want, f.Data.Emoji)
		}
	}
	if len(sender.sent["other"]) != 0 {
		t.Errorf("a reader of another channel got %v", sender.sent["other"])
	}
}

// TestPushedEditCarriesCounts: an edited message's pushed view carries its
// reactions' counts with me false (a pushed view is shared by a language's
// readers), and a message without reactions reads none.
func TestPushedEditCarriesCounts(t *testing.T) {
	store := &fakeStore{conns: []realtime.Connection{
		{ID: "member", ChannelID: chanID, Kind: realtime.KindMember, SubjectID: "U1", Language: "en", ExpiresAt: t0.Add(time.Hour)},
	}}
	sender := &fakeSender{}
	counter := &fakeCounter{counts: map[string]int{"👍": 2, "🎉": 0}}
	var seen []chat.MessageView
	enc := func(v chat.MessageView) ([]byte, error) { seen = append(seen, v); return encode(v) }
	p := &realtime.Pusher{Store: store, Translations: &fakeTranslations{}, Sender: sender, Encode: enc, Now: func() time.Time { return t0 }, Reactions: counter}
	before := message()
	edited := before
	edited.Content, edited.Revision, edited.EditedAt = "edited", 2, t0.Add(time.Minute)
	if err := p.Push(context.Background(), realtime.Change{Kind: realtime.MessageEdited, Message: edited, Before: before}); err != nil {
		t.Fatal(err)
	}
	if counter.calls != 0 || len(seen) != 1 || seen[0].Reactions != nil {
		t.Fatalf("an edit without reactions: %d count reads, views %v; want none and no reactions", counter.calls, seen)
	}
	edited.ReactionEmoji, edited.ReactionShards = []string{"🎉", "👍"}, 4
	if err := p.Push(context.Background(), realtime.Change{Kind: realtime.MessageEdited, Message: edited, Before: before}); err != nil {
		t.Fatal(err)
	}
	if counter.calls != 1 || counter.shards[0] != 4 || len(seen) != 2 {
		t.Fatalf("count reads %d (shards %v), views %d; want 1 of 4 shards", counter.calls, counter.shards, len(seen))
	}
	if r := seen[1].Reactions; len(r) != 1 || r[0] != (chat.Reaction{Emoji: "👍", Count: 2}) {
		t.Errorf("pushed reactions %v, want [👍 2 me=false] (🎉 at 0 left out)", r)
	}
}
