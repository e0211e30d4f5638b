package realtime

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/chatbridge/chat/pkg/chat"
)

type noTranslations struct{}

func (noTranslations) Translations(context.Context, []string, []string) (map[string]map[string]chat.Translation, error) {
	return nil, nil
}

type ownerReactions struct {
	readers []string
	asked   [][]string
}

// Reactions: 👍 by user:U1 and guest:G1, 🎉 by guest:G1, on every message.
func (o *ownerReactions) Reactions(_ context.Context, reader string, msgs []chat.Message) (map[string][]chat.Reaction, error) {
	o.readers = append(o.readers, reader)
	out := map[string][]chat.Reaction{}
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.ID)
		out[m.ID] = []chat.Reaction{{Emoji: "👍", Count: 2, Me: reader == "user:U1" || reader == "guest:G1"}, {Emoji: "🎉", Count: 1, Me: reader == "guest:G1"}}
	}
	o.asked = append(o.asked, ids)
	return out, nil
}

// TestBackfillFramesCarryTheReadersReactions: a backfill's frames show a
// member and a guest the same counts with their own Me, with one read per
// backfill of the messages with reactions alone.
func TestBackfillFramesCarryTheReadersReactions(t *testing.T) {
	rx := &ownerReactions{}
	s := &Subscriber{Translations: noTranslations{}, Reactions: rx, Encode: func(v chat.MessageView) ([]byte, error) {
		return json.Marshal(map[string]any{"id": v.Message.ID, "reactions": v.Reactions})
	}}
	msgs := []chat.Message{{ID: "M1", ChannelID: "C1"}, {ID: "M2", ChannelID: "C1", ReactionEmoji: []string{"👍", "🎉"}}}
	member := Connection{ID: "c1", ChannelID: "C1", Kind: KindMember, SubjectID: "U1", Language: "en"}
	guest := Connection{ID: "c2", ChannelID: "C1", Kind: KindGuest, SubjectID: "G1", RoomID: "R1", Language: "en"}
	got := map[string][]chat.Reaction{}
	for _, c := range []Connection{member, guest} {
		frames, err := s.frames(context.Background(), c, msgs, "message")
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Data struct {
				Reactions []chat.Reaction `json:"reactions"`
			} `json:"data"`
		}
		if err := json.Unmarshal(frames[1], &f); err != nil {
			t.Fatal(err)
		}
		got[c.Kind] = f.Data.Reactions
		if err := json.Unmarshal(frames[0], &f); err != nil || f.Data.Reactions != nil {
			t.Errorf("a message without reactions shows %v", f.Data.Reactions)
		}
	}
	if !reflect.DeepEqual(rx.readers, []string{"user:U1", "guest:G1"}) || !reflect.DeepEqual(rx.asked, [][]string{{"M2"}, {"M2"}}) {
		t.Fatalf("reads by %v of %v; want one each by user:U1 and guest:G1 of M2", rx.readers, rx.asked)
	}
	if want := []chat.Reaction{{Emoji: "👍", Count: 2, Me: true}, {Emoji: "🎉", Count: 1}}; !reflect.DeepEqual(got[KindMember], want) {
		t.Errorf("member's backfill shows %v, want %v", got[KindMember], want)
	}
	if want := []chat.Reaction{{Emoji: "👍", Count: 2, Me: true}, {Emoji: "🎉", Count: 1, Me: true}}; !reflect.DeepEqual(got[KindGuest], want) {
		t.Errorf("guest's backfill shows %v, want %v", got[KindGuest], want)
	}
}
