package realtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/realtime"
)

// typingFrom is a TypingStore whose every connection may signal.
type typingFrom struct{ conn realtime.Connection }

func (f typingFrom) TypingConnection(context.Context, string, time.Time, time.Duration) (realtime.Connection, bool, error) {
	return f.conn, true, nil
}

// TestTypingReachesABigChannelInTime: a typing signal in a channel of 500
// readers at 20 ms a send reaches every one of them, with the sends in
// flight together (at most the bound), inside a 10 s function: one after
// another they took 10 s and the last readers were never reached.
func TestTypingReachesABigChannelInTime(t *testing.T) {
	store := connections(501)
	author := store.conns[0]
	sender := &slowSender{latency: 20 * time.Millisecond}
	typist := &realtime.Typist{Typing: typingFrom{author}, Store: store, Sender: sender, Now: func() time.Time { return t0 }, Concurrency: 50}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	typist.Signal(ctx, author.ID)
	if n := len(sender.sent); n != 500 {
		t.Fatalf("reached %d readers, want 500", n)
	}
	if _, echoed := sender.sent[author.ID]; echoed {
		t.Fatal("the author's own connection was sent the signal")
	}
	for id, n := range sender.sent {
		if n != 1 {
			t.Fatalf("connection %s got %d signals, want 1", id, n)
		}
	}
	if sender.most < 2 || sender.most > 50 {
		t.Fatalf("at most %d sends in flight, want more than one and at most 50", sender.most)
	}
	t.Logf("500 readers, at most %d sends in flight", sender.most)
}

// TestTypingStopsBeforeTheDeadline: a signal whose function is about to
// time out starts no send within the reserve before the deadline, and
// returns: the rest of the readers miss this signal (the next one comes
// within 3 s), the function does not time out.
func TestTypingStopsBeforeTheDeadline(t *testing.T) {
	store := connections(201)
	author := store.conns[0]
	sender := &slowSender{latency: 50 * time.Millisecond}
	typist := &realtime.Typist{Typing: typingFrom{author}, Store: store, Sender: sender, Now: func() time.Time { return t0 }, Concurrency: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond) // 200 ms before the 1 s reserve
	defer cancel()
	typist.Signal(ctx, author.ID)
	if ctx.Err() != nil {
		t.Fatalf("the signal ran past its deadline")
	}
	if n := len(sender.sent); n == 0 || n >= 200 {
		t.Fatalf("reached %d readers, want some but not all (one at a time, 50 ms each, 200 ms before the reserve)", n)
	}
}
