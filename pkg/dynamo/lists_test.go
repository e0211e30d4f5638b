package dynamo_test

import (
	"context"
	"fmt"
	"github.com/chatbridge/chat/internal/racetest"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/messages"
)

// TestListMessagesFollowsTheStoresPageBoundary stores 30 messages of
// 40,000 emoji (160 KB items): one Query reads 1 MB, about six of them, and
// moto, like DynamoDB, stops there with a LastEvaluatedKey. Each page is
// then shorter than its limit of 25 and still has a next position; every
// Message is reached once, newest first, one Query a page; and the
// position after any item resumes right after it.
func TestListMessagesFollowsTheStoresPageBoundary(t *testing.T) {
	racetest.Payload(t)
	g := newGuestStack(t)
	ctx := context.Background()
	channel := g.ids.New(time.Now())
	base := time.Now()
	var want []string
	for i := 0; i < 30; i++ {
		at := base.Add(time.Duration(i) * time.Millisecond)
		m := chat.Message{ID: g.ids.New(at), WorkspaceID: channel, ChannelID: channel, Author: chat.Author{Type: chat.AuthorBot, Name: "Bot"},
			Content: fmt.Sprintf("%02d", i) + strings.Repeat("\U0001F600", messages.MaxContentLen-2), SourceLanguage: "en",
			Status: chat.MessageQueued, CreatedAt: at}
		if err := g.store.PutMessage(ctx, m); err != nil {
			t.Fatalf("put message %d: %v", i, err)
		}
		want = append([]string{m.ID}, want...)
	}

	var got []string
	var sizes []int
	after := ""
	for pages := 0; ; pages++ {
		if pages > 30 {
			t.Fatalf("more than 30 pages: the position does not advance")
		}
		g.st.Calls.Reset()
		page, err := g.store.Rooms.ListMessages(ctx, channel, after, 25)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		if calls := g.st.Calls.Calls(); len(calls) != 1 || calls[0] != "DynamoDB.Query" {
			t.Fatalf("page %d called %v, want one Query", pages, calls)
		}
		if len(page.After) != len(page.Items) {
			t.Fatalf("page %d: %d positions for %d items", pages, len(page.After), len(page.Items))
		}
		for i, m := range page.Items {
			if page.After[i] != "MSG#"+m.ID {
				t.Fatalf("page %d: position after %s is %q, want its sort key", pages, m.ID, page.After[i])
			}
			got = append(got, m.ID)
		}
		sizes = append(sizes, len(page.Items))
		if page.Next == "" {
			break
		}
		if len(page.Items) == 0 || page.Next != page.After[len(page.After)-1] {
			t.Fatalf("page %d: next %q after %d items, want the last item's position", pages, page.Next, len(page.Items))
		}
		after = page.Next
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("listed %v, want every message once, newest first: %v", got, want)
	}
	if sizes[0] >= 25 || len(sizes) < 2 {
		t.Fatalf("page sizes %v: want the first page cut short by the 1 MB Query page", sizes)
	}

	// A reader that showed only the first two items of a page resumes
	// from the second one's position with the third.
	first, err := g.store.Rooms.ListMessages(ctx, channel, "", 25)
	if err != nil {
		t.Fatal(err)
	}
	rest, ok := first.Rest(2)
	if !ok {
		t.Fatalf("no position after two items of %d", len(first.Items))
	}
	resumed, err := g.store.Rooms.ListMessages(ctx, channel, rest, 25)
	if err != nil {
		t.Fatal(err)
	}
	if len(resumed.Items) == 0 || resumed.Items[0].ID != want[2] {
		t.Fatalf("resumed after two items at %v, want %s", resumed.Items, want[2])
	}
}

// TestListMessagesLastPageHasNoNext pages 4 short messages by 2 and by 4:
// a page that ends the list has no next position, even when it is full.
func TestListMessagesLastPageHasNoNext(t *testing.T) {
	g := newGuestStack(t)
	ctx := context.Background()
	channel := g.ids.New(time.Now())
	for i := 0; i < 4; i++ {
		at := time.Now().Add(time.Duration(i) * time.Millisecond)
		if err := g.store.PutMessage(ctx, chat.Message{ID: g.ids.New(at), WorkspaceID: channel, ChannelID: channel,
			Author: chat.Author{Type: chat.AuthorBot, Name: "Bot"}, Content: "hi", SourceLanguage: "en", CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ limit, pages int }{{2, 2}, {4, 1}, {5, 1}} {
		after, pages := "", 0
		for ; ; pages++ {
			page, err := g.store.Rooms.ListMessages(ctx, channel, after, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if page.Next == "" {
				pages++
				break
			}
			after = page.Next
		}
		if pages != tc.pages {
			t.Errorf("limit %d: %d pages, want %d", tc.limit, pages, tc.pages)
		}
	}
}
