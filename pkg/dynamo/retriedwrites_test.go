package dynamo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/inbound"
	"github.com/chatbridge/chat/pkg/members"
)

// TestAMessageWriteRetriedAfterItLanded: the write of a post reaches
// DynamoDB and commits, its answer is lost (an HTTP 500 or a timeout), and
// the SDK sends it again, as it does in AWS. The retry meets the message it
// stored itself: each post path recognises it as its own and answers the
// success (not a 500 "message exists", a replay or a used signature), with
// the message stored once. A message of another post under the same id is
// still refused.
func TestAMessageWriteRetriedAfterItLanded(t *testing.T) {
	ctx := context.Background()
	t.Run("guest and member post without a key (PutItem)", func(t *testing.T) {
		s := newInboundStack(t)
		m := memberMessage(s.ids, s.now, "hello")
		s.st.Faults.LoseAnswer("DynamoDB.PutItem", 0)
		if err := s.store.PutMessage(ctx, m); err != nil {
			t.Fatalf("retried put: %v, want the write recognised as its own", err)
		}
		if n := s.count(t, "MSG#"); n != 1 {
			t.Fatalf("%d messages, want 1", n)
		}
		other := m
		other.Author = chat.Author{Type: chat.AuthorGuest, ID: s.ids.New(s.now), Name: "Gus"}
		if err := s.store.PutMessage(ctx, other); !chat.IsCode(err, chat.EConflict) {
			t.Fatalf("another post under the same id: %v, want a conflict", err)
		}
	})
	t.Run("member post with a key (TransactWriteItems)", func(t *testing.T) {
		s := newInboundStack(t)
		m := memberMessage(s.ids, s.now, "hello")
		key := &members.KeyRecord{UserID: demoAna, KeyHash: strings.Repeat("b", 64), Fingerprint: "fp", ExpiresAt: s.now.Add(24 * time.Hour), Message: m}
		s.st.Faults.LoseAnswer("DynamoDB.TransactWriteItems", 0)
		held, err := s.store.Members.PostMemberMessage(ctx, m, key, s.now)
		if err != nil || held != nil {
			t.Fatalf("retried post: held %+v, %v; want stored, not a replay of itself", held, err)
		}
		if n, k := s.count(t, "MSG#"), s.count(t, "UIDEM#"); n != 1 || k != 1 {
			t.Fatalf("%d messages and %d key records, want 1 and 1", n, k)
		}
	})
	for _, tc := range []struct{ name, key, sig string }{
		{"webhook post", "", ""},
		{"webhook post with a key", "k", ""},
		{"signed webhook post", "", "sig-1"},
		{"signed webhook post with a key", "k", "sig-1"},
	} {
		t.Run(tc.name+" (accept transaction)", func(t *testing.T) {
			s := newInboundStack(t)
			a := s.acceptance("hello", tc.key, tc.sig)
			s.st.Faults.LoseAnswer("DynamoDB.TransactWriteItems", 0)
			outcome, _, err := s.store.Inbound.Accept(ctx, a, s.now)
			if err != nil || outcome != inbound.Written {
				t.Fatalf("retried accept: %v %v, want written", outcome, err)
			}
			for _, prefix := range []string{"MSG#", "REQ#"} {
				if n := s.count(t, prefix); n != 1 {
					t.Fatalf("%d %s items, want 1", n, prefix)
				}
			}
		})
	}
}
