package app_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/dynamo/reactionstore"
	"github.com/chatbridge/chat/pkg/reactions"
)

type reactionBody struct {
	Data struct {
		MessageID string `json:"message_id"`
		Emoji     string `json:"emoji"`
		Count     int    `json:"count"`
		Me        bool   `json:"me"`
	} `json:"data"`
}

// reactPath is the member path of a reaction to message id of channel.
func (w *memberWorld) reactPath(channel, id, emoji string) string {
	return w.msgPath(channel, id) + "/reactions/" + emoji
}

// guestReactPath is the guest path of a reaction in the world's room.
func (w *memberWorld) guestReactPath(id, emoji string) string {
	return "/api/v1/external/rooms/" + w.room + "/messages/" + id + "/reactions/" + emoji
}

// react sends method to path and wants status; it returns the PUT's body.
func (w *memberWorld) react(t *testing.T, method, path string, hdr map[string]string, want int) reactionBody {
	t.Helper()
	rec := w.do(t, method, path, "", hdr)
	if rec.Code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, rec.Code, rec.Body, want)
	}
	if method != "PUT" || want >= 300 {
		if want == 204 && rec.Body.Len() != 0 {
			t.Fatalf("204 with a body %q", rec.Body)
		}
		return reactionBody{}
	}
	return decodeAs[reactionBody](t, rec.Body.Bytes())
}

// store is the reaction store on the world's table, as the test (no
// function's policy).
func (w *memberWorld) store() *reactionstore.Store { return reactionstore.New(w.st.DB, w.st.Table) }

// message reads message id of channel as stored.
func (w *memberWorld) message(t *testing.T, channel, id string) chat.Message {
	t.Helper()
	var it dynamo.MessageItem
	if err := attributevalue.UnmarshalMap(w.rawMessage(t, channel, id), &it); err != nil {
		t.Fatal(err)
	}
	return it.Message()
}

// reactionsOf is message id's reactions as reader (an owner) sees them.
func (w *memberWorld) reactionsOf(t *testing.T, channel, id, reader string) []chat.Reaction {
	t.Helper()
	m := w.message(t, channel, id)
	got, err := w.store().Reactions(context.Background(), reader, []chat.Message{m})
	if err != nil {
		t.Fatal(err)
	}
	return got[id]
}

// Members and guests add and remove reactions: 201 then 200 with the
// count, 204 also when absent, one reaction per reader and emoji whatever
// its spelling.
func TestReactionsMemberAndGuest(t *testing.T) {
	w := newMemberWorld(t)
	ana, ben, guest := bearer(w.ana), bearer(w.ben), w.joinGuest(t, "fr-FR")
	id := w.post(t, ben, "Release is out")
	thumbs := url.PathEscape("👍")

	b := w.react(t, "PUT", w.reactPath(w.general, id, thumbs), ana, 201)
	if b.Data.MessageID != id || b.Data.Emoji != "👍" || b.Data.Count != 1 || !b.Data.Me {
		t.Fatalf("first reaction %+v", b.Data)
	}
	if b = w.react(t, "PUT", w.reactPath(w.general, id, thumbs), ana, 200); b.Data.Count != 1 {
		t.Fatalf("again: count %d, want 1 (idempotent)", b.Data.Count)
	}
	// :+1: is the same reaction as 👍, and so is 👍 with a VS16.
	if b = w.react(t, "PUT", w.reactPath(w.general, id, ":+1:"), ana, 200); b.Data.Emoji != "👍" || b.Data.Count != 1 {
		t.Fatalf(":+1: after 👍: %+v, want the same reaction", b.Data)
	}
	if b = w.react(t, "PUT", w.reactPath(w.general, id, ":+1:"), ben, 201); b.Data.Count != 2 {
		t.Fatalf("Ben's :+1:: count %d, want 2", b.Data.Count)
	}
	if b = w.react(t, "PUT", w.guestReactPath(id, url.PathEscape("👍\uFE0F")), guest, 201); b.Data.Count != 3 {
		t.Fatalf("guest's 👍: count %d, want 3", b.Data.Count)
	}
	w.react(t, "PUT", w.guestReactPath(id, thumbs), guest, 200)
	w.react(t, "PUT", w.guestReactPath(id, url.PathEscape("❤")), guest, 201)

	got := w.reactionsOf(t, w.general, id, "user:"+w.ana.ID)
	want := []chat.Reaction{{Emoji: "👍", Count: 3, Me: true}, {Emoji: "❤️", Count: 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Ana sees %v, want %v", got, want)
	}

	w.react(t, "DELETE", w.reactPath(w.general, id, thumbs), ana, 204)
	w.react(t, "DELETE", w.reactPath(w.general, id, thumbs), ana, 204)
	w.react(t, "DELETE", w.reactPath(w.general, id, url.PathEscape("🎉")), ana, 204)
	w.react(t, "DELETE", w.guestReactPath(id, ":heart:"), guest, 204)
	got = w.reactionsOf(t, w.general, id, "user:"+w.ana.ID)
	if want := []chat.Reaction{{Emoji: "👍", Count: 2}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the removals Ana sees %v, want %v (a count of 0 is not listed)", got, want)
	}
	if b = w.react(t, "PUT", w.reactPath(w.general, id, thumbs), ana, 201); b.Data.Count != 3 {
		t.Fatalf("Ana again: count %d, want 3", b.Data.Count)
	}
}

// The refusals: 403 for a non-member, 404 for unknown, malformed and other
// channels' messages, 410 for a deleted message and a closed room, 422
// for what is not one emoji.
func TestReactionRefusals(t *testing.T) {
	w := newMemberWorld(t)
	ana, ben, guest := bearer(w.ana), bearer(w.ben), w.joinGuest(t, "fr-FR")
	id := w.post(t, ben, "hello")
	thumbs := url.PathEscape("👍")

	inRandom := w.do(t, "POST", w.wsPath("/channels/"+w.random+"/messages"), `{"content":"secret"}`, ana)
	randomID := decodeAs[struct{ Data viewBody }](t, inRandom.Body.Bytes()).Data.ID
	w.react(t, "PUT", w.reactPath(w.random, randomID, thumbs), ben, 403)
	w.react(t, "DELETE", w.reactPath(w.random, randomID, thumbs), ben, 403)
	// Another channel's message on this channel's path, and on the guest path.
	w.react(t, "PUT", w.reactPath(w.general, randomID, thumbs), ana, 404)
	w.react(t, "PUT", w.guestReactPath(randomID, thumbs), guest, 404)
	w.react(t, "DELETE", w.guestReactPath(randomID, thumbs), guest, 404)
	w.react(t, "PUT", w.reactPath(w.general, chat.NewIDs().New(time.Now()), thumbs), ana, 404)
	w.react(t, "PUT", w.reactPath(w.general, "not-an-id", thumbs), ana, 404)
	w.react(t, "PUT", w.reactPath(w.general, strings.Repeat("A", 3000), thumbs), ana, 404)

	for _, bad := range []string{"a", "1", "abc", ":nope:", url.PathEscape("👍👍"), url.PathEscape("a👍"), url.PathEscape("\u200D"),
		url.PathEscape("\U0001F3FD"), "%00", "%E2%80%A8", "%EF%BF%BF", "%FF", strings.Repeat("a", 10000), strings.Repeat("%F0%9F%91%8D", 800)} {
		rec := w.do(t, "PUT", w.reactPath(w.general, id, bad), "", ana)
		if rec.Code != 422 || !strings.Contains(rec.Body.String(), `"emoji"`) {
			t.Fatalf("PUT %.40q: %d %s, want 422 on emoji", bad, rec.Code, rec.Body)
		}
		if rec := w.do(t, "DELETE", w.guestReactPath(id, bad), "", guest); rec.Code != 422 {
			t.Fatalf("guest DELETE %.40q: %d %s, want 422", bad, rec.Code, rec.Body)
		}
	}
	if n := len(w.scanPK(t, reactionstore.ShardPrefix)) + len(w.scanPK(t, reactionstore.ReaderPrefix)); n != 0 {
		t.Fatalf("%d count shards after refusals only, want 0", n)
	}

	w.react(t, "PUT", w.reactPath(w.general, id, thumbs), ana, 201)
	w.react(t, "DELETE", w.msgPath(w.general, id), ben, 204)
	for _, c := range []struct {
		method, path string
		hdr          map[string]string
	}{{"PUT", w.reactPath(w.general, id, thumbs), ana}, {"DELETE", w.reactPath(w.general, id, thumbs), ana},
		{"PUT", w.guestReactPath(id, thumbs), guest}, {"DELETE", w.guestReactPath(id, thumbs), guest}} {
		rec := w.do(t, c.method, c.path, "", c.hdr)
		if rec.Code != 410 || !strings.Contains(rec.Body.String(), `"message_deleted"`) {
			t.Fatalf("%s on a deleted message: %d %s, want 410 message_deleted", c.method, rec.Code, rec.Body)
		}
	}
	if got := w.reactionsOf(t, w.general, id, "user:"+w.ana.ID); len(got) != 0 {
		t.Fatalf("the tombstone shows %v, want no reactions", got)
	}

	live := w.post(t, ben, "still here")
	if rec := w.do(t, "POST", w.wsPath("/rooms/"+w.room+"/close"), "", ana); rec.Code != 200 {
		t.Fatalf("close: %d %s", rec.Code, rec.Body)
	}
	for _, method := range []string{"PUT", "DELETE"} {
		rec := w.do(t, method, w.guestReactPath(live, thumbs), "", guest)
		if rec.Code != 410 || !strings.Contains(rec.Body.String(), chat.ERoomExpired) {
			t.Fatalf("guest %s after the room closed: %d %s, want 410 %s", method, rec.Code, rec.Body, chat.ERoomExpired)
		}
	}
}

// At most 50 distinct emoji: the 51st is 422; once every reaction of one
// emoji is removed, a new one fits.
func TestReactionDistinctLimit(t *testing.T) {
	w := newMemberWorld(t)
	ana, ben := bearer(w.ana), bearer(w.ben)
	id := w.post(t, ben, "vote")
	var codes []string
	for name := range reactions.Shortcodes {
		e := reactions.Shortcodes[name]
		if !contains(codes, e) {
			codes = append(codes, e)
		}
	}
	for i := 0; i < chat.MaxReactionEmoji; i++ {
		w.react(t, "PUT", w.reactPath(w.general, id, url.PathEscape(codes[i])), ana, 201)
	}
	w.react(t, "PUT", w.reactPath(w.general, id, url.PathEscape(codes[0])), ben, 201)
	rec := w.do(t, "PUT", w.reactPath(w.general, id, url.PathEscape(codes[50])), "", ben)
	if rec.Code != 422 || !strings.Contains(rec.Body.String(), "50 distinct") {
		t.Fatalf("51st emoji: %d %s, want 422", rec.Code, rec.Body)
	}
	// Ana's reaction with codes[0] goes, Ben's stays: still full.
	w.react(t, "DELETE", w.reactPath(w.general, id, url.PathEscape(codes[0])), ana, 204)
	w.react(t, "PUT", w.reactPath(w.general, id, url.PathEscape(codes[50])), ben, 422)
	w.react(t, "DELETE", w.reactPath(w.general, id, url.PathEscape(codes[1])), ana, 204)
	w.react(t, "PUT", w.reactPath(w.general, id, url.PathEscape(codes[50])), ben, 201)
	m := w.message(t, w.general, id)
	if len(m.ReactionEmoji) != chat.MaxReactionEmoji || contains(m.ReactionEmoji, codes[1]) || m.ReactionEmoji[49] != codes[50] {
		t.Fatalf("reaction_emoji %v: want codes[1] pruned and codes[50] last", m.ReactionEmoji)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scanPK returns the items whose pk starts with prefix.
func (w *memberWorld) scanPK(t *testing.T, prefix string) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(w.st.DB, &dynamodb.ScanInput{TableName: aws.String(w.st.Table), ConsistentRead: aws.Bool(true),
		FilterExpression:          aws.String("begins_with(pk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: prefix}}})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		out = append(out, page.Items...)
	}
	return out
}

// serve sends a request without the OpenAPI check (safe from goroutines).
func (w *memberWorld) serve(method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	return rec
}

// Two PUTs of one emoji by one reader racing: one 201, one 200, count 1.
// Reactions racing the message's deletion: each is its answer or 410,
// never a 5xx, and the tombstone shows none.
func TestReactionRaces(t *testing.T) {
	w := newMemberWorld(t)
	ana, ben := bearer(w.ana), bearer(w.ben)
	for round := 0; round < 3; round++ {
		id := w.post(t, ben, "race")
		var wg sync.WaitGroup
		codes := make([]int, 2)
		for i := range codes {
			wg.Add(1)
			go func() { defer wg.Done(); codes[i] = w.serve("PUT", w.reactPath(w.general, id, ":tada:"), ana).Code }()
		}
		wg.Wait()
		if codes[0]+codes[1] != 401 {
			t.Fatalf("round %d: %v, want one 201 and one 200", round, codes)
		}
		if got := w.reactionsOf(t, w.general, id, "user:"+w.ana.ID); len(got) != 1 || got[0].Count != 1 {
			t.Fatalf("round %d: %v, want 🎉 counted once", round, got)
		}
	}

	id := w.post(t, ben, "going away")
	var wg sync.WaitGroup
	emoji := []string{":tada:", ":eyes:", ":rocket:", ":fire:", ":+1:", ":heart:"}
	codes := make([]int, 2*len(emoji))
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hdr := ana
			if i%2 == 1 {
				hdr = ben
			}
			codes[i] = w.serve("PUT", w.reactPath(w.general, id, emoji[i/2]), hdr).Code
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); w.serve("DELETE", w.msgPath(w.general, id), ben) }()
	wg.Wait()
	for i, c := range codes {
		if c != 201 && c != 410 {
			t.Fatalf("reaction %d racing the deletion: %d, want 201 or 410", i, c)
		}
	}
	if w.message(t, w.general, id).DeletedAt.IsZero() {
		t.Fatal("the message is not deleted")
	}
	if got := w.reactionsOf(t, w.general, id, "user:"+w.ana.ID); len(got) != 0 {
		t.Fatalf("the tombstone shows %v", got)
	}
	if v := w.listed(t, ana, id); !v.Deleted {
		t.Fatalf("listed %+v, want a tombstone", v)
	}
}
