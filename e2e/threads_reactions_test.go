package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// TestThreadsAndReactionsThroughTheirBinaries runs contract section 18
// through the real bootstraps: Ben posts a root and a reply to it
// (PostChannelMessageFunction, thread_id), the channel list shows the root
// only with reply_count 1 (ListChannelMessagesFunction), the thread lists
// the reply (ListChannelRepliesFunction), Ben reacts 👍 (201, then 200:
// AddChannelReactionFunction) and the list shows it with me, he removes it
// (204: RemoveChannelReactionFunction), and a reaction to the deleted root
// is 410 message_deleted.
func TestThreadsAndReactionsThroughTheirBinaries(t *testing.T) {
	start := demoRuntimes(t)
	sample := func(name string) events.APIGatewayV2HTTPRequest {
		ev := sampleHTTP(t, name)
		ev.Headers["authorization"] = "Bearer wsk_demo_ben_token"
		return ev
	}
	at := func(ev events.APIGatewayV2HTTPRequest, id string) events.APIGatewayV2HTTPRequest {
		old := ev.PathParameters["message_id"]
		ev.PathParameters["message_id"] = id
		ev.RawPath = strings.Replace(ev.RawPath, old, id, 1)
		ev.RequestContext.HTTP.Path = ev.RawPath
		return ev
	}
	type view struct {
		ID         string  `json:"id"`
		ThreadID   *string `json:"thread_id"`
		ReplyCount int     `json:"reply_count"`
		Reactions  []struct {
			Emoji string `json:"emoji"`
			Count int    `json:"count"`
			Me    bool   `json:"me"`
		} `json:"reactions"`
	}
	post := func(body string) view {
		t.Helper()
		ev := sample("post-channel-message.json")
		ev.Body = body
		resp := invokeHTTP(t, start("PostChannelMessageFunction"), mustJSON(t, ev))
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("post %s: %d %s", body, resp.StatusCode, resp.Body)
		}
		var out struct{ Data view }
		if err := json.Unmarshal([]byte(resp.Body), &out); err != nil {
			t.Fatal(err)
		}
		return out.Data
	}
	list := func(name, fn string, id string) []view {
		t.Helper()
		ev := sample(name)
		if id != "" {
			ev = at(ev, id)
		}
		resp := invokeHTTP(t, start(fn), mustJSON(t, ev))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", fn, resp.StatusCode, resp.Body)
		}
		var out struct{ Data []view }
		if err := json.Unmarshal([]byte(resp.Body), &out); err != nil {
			t.Fatal(err)
		}
		return out.Data
	}
	root := post(`{"content":"Deploy 2.3.1 failed: see the log"}`)
	reply := post(`{"content":"Rolling back now","thread_id":"` + root.ID + `"}`)
	if reply.ThreadID == nil || *reply.ThreadID != root.ID {
		t.Fatalf("reply's thread_id %v, want %s", reply.ThreadID, root.ID)
	}
	var listed *view
	for _, v := range list("list-channel-messages.json", "ListChannelMessagesFunction", "") {
		if v.ID == reply.ID {
			t.Fatalf("the channel list shows the reply %s", reply.ID)
		}
		if v.ID == root.ID {
			listed = &v
		}
	}
	if listed == nil || listed.ReplyCount != 1 {
		t.Fatalf("the root in the list: %+v, want reply_count 1", listed)
	}
	if got := list("list-channel-replies.json", "ListChannelRepliesFunction", root.ID); len(got) != 1 || got[0].ID != reply.ID {
		t.Fatalf("the thread: %+v, want the one reply", got)
	}
	react := func(name, fn string, want int) {
		t.Helper()
		resp := invokeHTTP(t, start(fn), mustJSON(t, at(sample(name), root.ID)))
		if resp.StatusCode != want {
			t.Fatalf("%s: %d %s, want %d", fn, resp.StatusCode, resp.Body, want)
		}
	}
	react("add-channel-reaction.json", "AddChannelReactionFunction", http.StatusCreated)
	react("add-channel-reaction.json", "AddChannelReactionFunction", http.StatusOK)
	for _, v := range list("list-channel-messages.json", "ListChannelMessagesFunction", "") {
		if v.ID == root.ID && (len(v.Reactions) != 1 || v.Reactions[0].Emoji != "👍" || v.Reactions[0].Count != 1 || !v.Reactions[0].Me) {
			t.Fatalf("the root's reactions %+v, want 👍 1 by Ben", v.Reactions)
		}
	}
	react("remove-channel-reaction.json", "RemoveChannelReactionFunction", http.StatusNoContent)
	del := sample("delete-channel-message.json")
	if resp := invokeHTTP(t, start("DeleteChannelMessageFunction"), mustJSON(t, at(del, root.ID))); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d %s", resp.StatusCode, resp.Body)
	}
	resp := invokeHTTP(t, start("AddChannelReactionFunction"), mustJSON(t, at(sample("add-channel-reaction.json"), root.ID)))
	if resp.StatusCode != http.StatusGone || !strings.Contains(resp.Body, "message_deleted") {
		t.Fatalf("a reaction to the deleted root: %d %s, want 410 message_deleted", resp.StatusCode, resp.Body)
	}
}
