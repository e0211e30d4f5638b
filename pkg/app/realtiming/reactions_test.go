package realtiming_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/reactionstore"
	"github.com/chatbridge/chat/pkg/reactions"
)

// TestReactionsArePushedCoalesced, through RealtimePushFunction's stream
// mapping on the strict local AWS: 20 readers react 👍 to a message; each
// connected member gets reaction pushes of the total, never more than one
// per stream batch that carried count records, the last one 20.
func TestReactionsArePushedCoalesced(t *testing.T) {
	r := newPushRig(t, rigConfig{n: 2})
	start := time.Now()
	msg := r.post(t, 1)[0]
	r.await(t, []string{msg}, start, 10*time.Second)
	st := reactionstore.New(r.a.DB, r.a.Table)
	ids := chat.NewIDs()
	for i := range 20 {
		who := chat.Author{Type: chat.AuthorGuest, ID: ids.New(time.Now()), Name: fmt.Sprint("G", i)}
		if _, err := st.Add(context.Background(), reactions.Reaction{WorkspaceID: "01JD9N0V80G9T6DXN5EAY6K8H4", ChannelID: channel, MessageID: msg,
			Owner: reactions.Owner(who), Author: who, Emoji: "👍", Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		done := true
		for _, c := range r.clients {
			c.mu.Lock()
			got := append([]reactionPush(nil), c.reactions...)
			c.mu.Unlock()
			if len(got) == 0 || got[len(got)-1].Count != 20 {
				done = false
			}
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			for i, c := range r.clients {
				t.Errorf("client %d got %+v", i, c.reactions)
			}
			t.Fatal("the total 20 was not pushed to every client")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // any late push
	batches := 0
	for _, inv := range r.invocationLog() {
		if inv.records > 0 {
			batches++
		}
	}
	for i, c := range r.clients {
		c.mu.Lock()
		got := append([]reactionPush(nil), c.reactions...)
		c.mu.Unlock()
		for _, p := range got {
			if p.MessageID != msg || p.Emoji != "👍" || p.Count < 1 || p.Count > 20 {
				t.Errorf("client %d: push %+v", i, p)
			}
		}
		if len(got) > batches-1 {
			t.Errorf("client %d got %d reaction pushes for %d stream batches (one of them the message's)", i, len(got), batches)
		}
		t.Logf("client %d: %d reaction pushes %+v; %d invocations %+v", i, len(got), got, batches, r.invocationLog())
	}
}
