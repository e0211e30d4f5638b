package app_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/reactionstore"
	"github.com/chatbridge/chat/pkg/reactions"
)

type viewReaction struct {
	Emoji string `json:"emoji"`
	Count int    `json:"count"`
	Me    bool   `json:"me"`
}

type reactedViewBody struct {
	ID        string         `json:"id"`
	Reactions []viewReaction `json:"reactions"`
}

func batchGetCalls(calls []string) int {
	n := 0
	for _, c := range calls {
		if strings.Contains(c, "BatchGetItem") {
			n++
		}
	}
	return n
}

// TestViewsCarryReactions, on the strict local AWS: a message's reactions
// show in Ben's (member) and a guest's lists with the same counts in order
// of first use and each reader's own me, [] on a message without any; the
// list costs one call more (one BatchGetItem) once a message on the page
// has reactions, and none before; Ana's edit answer shows the current
// reactions (me false: she has none).
func TestViewsCarryReactions(t *testing.T) {
	w := newMemberWorld(t)
	ctx := context.Background()
	m1, m2 := w.post(t, bearer(w.ana), "first"), w.post(t, bearer(w.ana), "second")
	guest := w.joinGuest(t, "en")
	rec := w.do(t, "GET", "/api/v1/external/rooms/"+w.room+"/messages?limit=100", "", guest)
	if rec.Code != 200 {
		t.Fatalf("guest list: %d %s", rec.Code, rec.Body)
	}
	list := func(path string, hdr map[string]string) map[string][]viewReaction {
		t.Helper()
		rec := w.do(t, "GET", path, "", hdr)
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		out := map[string][]viewReaction{}
		for _, v := range decodeAs[pageOf[reactedViewBody]](t, rec.Body.Bytes()).Data {
			if v.Reactions == nil {
				t.Fatalf("%s: message %s without reactions: %s", path, v.ID, rec.Body)
			}
			out[v.ID] = v.Reactions
		}
		return out
	}
	memberList := w.wsPath("/channels/" + w.general + "/messages?limit=100")
	guestList := "/api/v1/external/rooms/" + w.room + "/messages?limit=100"
	before := w.calls(t, "member list without reactions", func() { list(memberList, bearer(w.ben)) })
	if n := batchGetCalls(before); n != 0 {
		t.Fatalf("a page without reactions made %d BatchGetItem calls: %v", n, before)
	}

	// The guest's id, from its own post's author.
	rec = w.do(t, "POST", "/api/v1/external/rooms/"+w.room+"/messages", `{"content":"hi"}`, guest)
	if rec.Code != 201 {
		t.Fatalf("guest post: %d %s", rec.Code, rec.Body)
	}
	guestID := *decodeAs[struct{ Data viewBody }](t, rec.Body.Bytes()).Data.Author.ID
	st := reactionstore.New(w.app.DB, w.app.Table)
	react := func(owner chat.Author, emoji string) {
		t.Helper()
		if _, err := st.Add(ctx, reactions.Reaction{WorkspaceID: w.ws.ID, ChannelID: w.general, MessageID: m1, Owner: reactions.Owner(owner),
			Author: owner, Emoji: emoji, Now: time.Now()}); err != nil {
			t.Fatalf("react %s %s: %v", owner.ID, emoji, err)
		}
	}
	react(chat.Author{Type: chat.AuthorUser, ID: w.ben.ID, Name: "Ben"}, "👍")
	react(chat.Author{Type: chat.AuthorGuest, ID: guestID, Name: "G"}, "👍")
	react(chat.Author{Type: chat.AuthorGuest, ID: guestID, Name: "G"}, "🎉")

	// The push's read of the totals, as RealtimePushFunction (its policy:
	// BatchGetItem of RXC#), over all 16 possible shards.
	push := reactionstore.New(dynamodb.NewFromConfig(w.st.As("RealtimePushFunction")), w.app.Table)
	if n, err := push.Counts(ctx, m1, reactions.MaxShards); err != nil || n["👍"] != 2 || n["🎉"] != 1 {
		t.Fatalf("Counts as the push = %v, %v; want 👍 2 and 🎉 1", n, err)
	}

	var ben map[string][]viewReaction
	after := w.calls(t, "member list with reactions", func() { ben = list(memberList, bearer(w.ben)) })
	if len(after) != len(before)+1 || batchGetCalls(after) != 1 {
		t.Fatalf("calls with reactions %v, without %v: want one BatchGetItem more", after, before)
	}
	if want := []viewReaction{{"👍", 2, true}, {"🎉", 1, false}}; !reflect.DeepEqual(ben[m1], want) {
		t.Errorf("Ben reads %v, want %v", ben[m1], want)
	}
	if len(ben[m2]) != 0 {
		t.Errorf("Ben reads %v on a message without reactions, want []", ben[m2])
	}
	if got, want := list(guestList, guest)[m1], []viewReaction{{"👍", 2, true}, {"🎉", 1, true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the guest reads %v, want %v", got, want)
	}
	if got, want := list(memberList, bearer(w.ana))[m1], []viewReaction{{"👍", 2, false}, {"🎉", 1, false}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Ana reads %v, want %v", got, want)
	}
	rec = w.do(t, "PATCH", w.msgPath(w.general, m1), `{"content":"first, edited"}`, bearer(w.ana))
	if rec.Code != 200 {
		t.Fatalf("edit: %d %s", rec.Code, rec.Body)
	}
	if got, want := decodeAs[struct{ Data reactedViewBody }](t, rec.Body.Bytes()).Data.Reactions, []viewReaction{{"👍", 2, false}, {"🎉", 1, false}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the edit answers %v, want %v", got, want)
	}
}
