package realtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/realtime"
)

// slowSender takes latency a send, counts sends per connection and the
// most in flight at once, and honours its context as the SDK does.
type slowSender struct {
	latency time.Duration
	mu      sync.Mutex
	sent    map[string]int
	flight  int
	most    int
}

func (s *slowSender) Send(ctx context.Context, id string, _ []byte) error {
	s.mu.Lock()
	s.flight++
	s.most = max(s.most, s.flight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.flight--
		s.mu.Unlock()
	}()
	select {
	case <-ctx.Done():
		return fmt.Errorf("post: %w", ctx.Err())
	case <-time.After(s.latency):
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent == nil {
		s.sent = map[string]int{}
	}
	s.sent[id]++
	return nil
}

func (s *slowSender) Close(context.Context, string) error { return nil }

func connections(n int) *fakeStore {
	store := &fakeStore{}
	for i := range n {
		store.conns = append(store.conns, realtime.Connection{ID: fmt.Sprintf("c%03d", i), ChannelID: chanID,
			Kind: realtime.KindMember, SubjectID: fmt.Sprint(i), Language: "en", ExpiresAt: t0.Add(time.Hour)})
	}
	return store
}

// TestPushIsConcurrentAndBounded: 200 connections at 20 ms a send go out
// with at most Concurrency sends in flight, each connection once, well
// under the 4 s they take one after the other.
func TestPushIsConcurrentAndBounded(t *testing.T) {
	sender := &slowSender{latency: 20 * time.Millisecond}
	p := &realtime.Pusher{Store: connections(200), Translations: &fakeTranslations{}, Sender: sender, Encode: encode,
		Now: func() time.Time { return t0 }, Concurrency: 25}
	start := time.Now()
	if err := p.Push(context.Background(), realtime.Change{Kind: realtime.MessageStored, Message: message()}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if sender.most > 25 || sender.most < 2 {
		t.Fatalf("%d sends in flight at most, want between 2 and 25", sender.most)
	}
	for i := range 200 {
		if n := sender.sent[fmt.Sprintf("c%03d", i)]; n != 1 {
			t.Fatalf("c%03d got %d pushes, want 1", i, n)
		}
	}
	t.Logf("200 connections at 20 ms, 25 in flight: %v", took)
}

// TestPushStopsBeforeTheDeadline: a push that cannot reach every connection
// within its invocation stops before the deadline with ErrUnfinished; its
// retries, each under a new deadline, skip the connections already sent
// to, so every connection gets exactly one push, and Sent forgets the
// change once it is finished. Without Sent every retry starts over: the
// first connections get the push again and again, and the change never
// finishes.
func TestPushStopsBeforeTheDeadline(t *testing.T) {
	for _, remember := range []bool{true, false} {
		sender := &slowSender{latency: 20 * time.Millisecond}
		sent := &realtime.Sent{}
		p := &realtime.Pusher{Store: connections(200), Translations: &fakeTranslations{}, Sender: sender, Encode: encode,
			Now: func() time.Time { return t0 }, Concurrency: 4, Reserve: 100 * time.Millisecond}
		if remember {
			p.Sent = sent
		}
		change := realtime.Change{Key: "event-1", Kind: realtime.MessageStored, Message: message()}
		attempts, limit := 0, 20
		if !remember {
			limit = 3
		}
		var err error
		for attempts < limit {
			attempts++
			ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
			start := time.Now()
			err = p.Push(ctx, change)
			took := time.Since(start)
			cancel()
			if took > 350*time.Millisecond {
				t.Fatalf("attempt %d took %v, want it back before the 400 ms deadline, less half the reserve", attempts, took)
			}
			if err == nil {
				break
			}
			if !errors.Is(err, realtime.ErrUnfinished) {
				t.Fatalf("attempt %d: %v, want ErrUnfinished", attempts, err)
			}
		}
		if !remember {
			if err == nil || sender.sent["c000"] != 3 {
				t.Fatalf("without Sent: %v after 3 attempts, c000 pushed %d times; want unfinished and 3", err, sender.sent["c000"])
			}
			continue
		}
		if err != nil || attempts < 2 {
			t.Fatalf("%v after %d attempts, want finished after more than 1 (200 sends of 20 ms, 4 at a time, take 1 s)", err, attempts)
		}
		for i := range 200 {
			if n := sender.sent[fmt.Sprintf("c%03d", i)]; n != 1 {
				t.Fatalf("c%03d got %d pushes, want exactly 1", i, n)
			}
		}
		if sent.Len() != 0 {
			t.Fatalf("Sent still holds %d changes after the push finished, want 0", sent.Len())
		}
		t.Logf("finished in %d attempts of 400 ms", attempts)
	}
}

// TestPushPastItsStopTimeStartsNothing: with less than the reserve left,
// a push reads nothing and sends nothing.
func TestPushPastItsStopTimeStartsNothing(t *testing.T) {
	store := connections(3)
	sender := &slowSender{}
	p := &realtime.Pusher{Store: store, Translations: &fakeTranslations{}, Sender: sender, Encode: encode, Now: func() time.Time { return t0 }}
	ctx, cancel := context.WithTimeout(context.Background(), realtime.DefaultReserve/2)
	defer cancel()
	if err := p.Push(ctx, realtime.Change{Kind: realtime.MessageStored, Message: message()}); !errors.Is(err, realtime.ErrUnfinished) {
		t.Fatalf("got %v, want ErrUnfinished", err)
	}
	if store.queries != 0 || len(sender.sent) != 0 {
		t.Fatalf("%d queries, %d sends, want none", store.queries, len(sender.sent))
	}
}
