package rooms_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/members"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// fakeReactions is a store of reactions: owners by message and emoji.
type fakeReactions struct {
	calls   int
	readers []string
	asked   [][]string
	by      map[string]map[string][]string // message -> emoji -> owners
}

func (f *fakeReactions) Reactions(_ context.Context, reader string, msgs []chat.Message) (map[string][]chat.Reaction, error) {
	f.calls++
	f.readers = append(f.readers, reader)
	var ids []string
	out := map[string][]chat.Reaction{}
	for _, m := range msgs {
		ids = append(ids, m.ID)
		for _, e := range m.ReactionEmoji {
			owners := f.by[m.ID][e]
			if len(owners) == 0 {
				continue
			}
			me := false
			for _, o := range owners {
				me = me || o == reader
			}
			out[m.ID] = append(out[m.ID], chat.Reaction{Emoji: e, Count: len(owners), Me: me})
		}
	}
	f.asked = append(f.asked, ids)
	return out, nil
}

// TestListsCarryTheReadersReactions: the member's and the guest's lists
// show one message's reactions with the same counts and each reader's
// own Me, with one read per page, of only the messages with reactions
// (not the deleted one, which shows none); a page without reactions
// reads nothing.
func TestListsCarryTheReadersReactions(t *testing.T) {
	msgs := []chat.Message{
		{ID: "M3", ChannelID: "C1", SourceLanguage: "en"},
		{ID: "M2", ChannelID: "C1", SourceLanguage: "en", ReactionEmoji: []string{"👍", "🎉", "👀"}},
		{ID: "M1", ChannelID: "C1", SourceLanguage: "en", ReactionEmoji: []string{"👍"}, DeletedAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)},
	}
	store := fakeReader{list: func(context.Context, string, string, int) (chat.Page[chat.Message], error) {
		return chat.Page[chat.Message]{Items: msgs}, nil
	}}
	rx := &fakeReactions{by: map[string]map[string][]string{
		"M2": {"👍": {"user:U1", "guest:G1"}, "🎉": {"guest:G1"}},
		"M1": {"👍": {"user:U1"}},
	}}
	ctx := context.Background()
	svc := &members.Service{Messages: store, Reactions: rx}
	p := workspaces.Principal{WorkspaceID: "W1", UserID: "U1", Channels: []string{"C1"}, PreferredLanguage: "en"}
	mp, err := svc.ListMessages(ctx, p, "C1", "", 25)
	if err != nil {
		t.Fatal(err)
	}
	gp, err := (&rooms.Lister{Store: store, Reactions: rx}).List(ctx, chat.GuestSession{Guest: chat.Guest{ID: "G1", PreferredLanguage: "en"}}, chat.Room{ChannelID: "C1"}, "", 25)
	if err != nil {
		t.Fatal(err)
	}
	if rx.calls != 2 || !reflect.DeepEqual(rx.readers, []string{"user:U1", "guest:G1"}) || !reflect.DeepEqual(rx.asked, [][]string{{"M2"}, {"M2"}}) {
		t.Fatalf("reads %d by %v of %v; want one per page, by user:U1 then guest:G1, of M2 alone", rx.calls, rx.readers, rx.asked)
	}
	wantMember := []chat.Reaction{{Emoji: "👍", Count: 2, Me: true}, {Emoji: "🎉", Count: 1}}
	wantGuest := []chat.Reaction{{Emoji: "👍", Count: 2, Me: true}, {Emoji: "🎉", Count: 1, Me: true}}
	if got := mp.Items[1].Reactions; !reflect.DeepEqual(got, wantMember) {
		t.Errorf("member sees %v, want %v", got, wantMember)
	}
	if got := gp.Items[1].Reactions; !reflect.DeepEqual(got, wantGuest) {
		t.Errorf("guest sees %v, want %v", got, wantGuest)
	}
	for _, pg := range []chat.Page[chat.MessageView]{mp, gp} {
		if pg.Items[0].Reactions != nil || pg.Items[2].Reactions != nil {
			t.Errorf("reactions on a message without any or a deleted one: %v, %v", pg.Items[0].Reactions, pg.Items[2].Reactions)
		}
	}

	msgs = msgs[:1]
	if _, err := svc.ListMessages(ctx, p, "C1", "", 25); err != nil {
		t.Fatal(err)
	}
	if rx.calls != 2 {
		t.Errorf("a page without reactions read them (%d reads)", rx.calls)
	}
}
