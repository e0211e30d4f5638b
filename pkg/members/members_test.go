package members_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/members"
	"github.com/chatbridge/chat/pkg/workspaces"
)

type fakePosts struct {
	post func(ctx context.Context, m chat.Message, key *members.KeyRecord, now time.Time) (*members.KeyRecord, error)
}

func (f fakePosts) PostMemberMessage(ctx context.Context, m chat.Message, key *members.KeyRecord, now time.Time) (*members.KeyRecord, error) {
	return f.post(ctx, m, key, now)
}

const channel = "01JD9N1048PXK951NGC7NEMZX9"

var ben = workspaces.Principal{WorkspaceID: "01JD9N0V80G9T6DXN5EAY6K8H4", UserID: "01JD9N0X6GD9MV02DG9EVV9WM2", Name: "Ben",
	Role: chat.RoleMember, PreferredLanguage: "en-US", Channels: []string{channel}}

func TestPostDecisions(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var stored []*members.KeyRecord
	held := map[string]*members.KeyRecord{}
	svc := &members.Service{IDs: chat.NewIDs(), Now: func() time.Time { return now }, Posts: fakePosts{post: func(_ context.Context, m chat.Message, key *members.KeyRecord, _ time.Time) (*members.KeyRecord, error) {
		if key != nil {
			if h, ok := held[key.KeyHash]; ok {
				return h, nil
			}
			held[key.KeyHash] = key
			stored = append(stored, key)
		}
		return nil, nil
	}}}
	for _, tc := range []struct {
		name string
		post members.Post
		code string
		// replayed is whether the answer is a replay.
		replayed bool
	}{
		{"posts", members.Post{ChannelID: channel, Content: "Hi"}, "", false},
		{"not a member", members.Post{ChannelID: "01JD9N0Z50BAKDWE0FBRMSFD5P", Content: "Hi"}, chat.EForbidden, false},
		{"empty channel", members.Post{Content: "Hi"}, chat.EForbidden, false},
		{"membership before content", members.Post{ChannelID: "X", Content: ""}, chat.EForbidden, false},
		{"blank", members.Post{ChannelID: channel, Content: " \u2028 "}, chat.EValidation, false},
		{"content before key", members.Post{ChannelID: channel, Content: "", Key: "\x00", HasKey: true}, chat.EValidation, false},
		{"empty key", members.Post{ChannelID: channel, Content: "Hi", Key: "", HasKey: true}, chat.EInvalidIdempotencyKey, false},
		{"256-character key", members.Post{ChannelID: channel, Content: "Hi", Key: strings.Repeat("k", 256), HasKey: true}, chat.EInvalidIdempotencyKey, false},
		{"255-character key", members.Post{ChannelID: channel, Content: "Hi", Key: strings.Repeat("k", 255), HasKey: true}, "", false},
		{"same key, same request", members.Post{ChannelID: channel, Content: "Hi", Key: strings.Repeat("k", 255), HasKey: true}, "", true},
		{"same key, skip differs", members.Post{ChannelID: channel, Content: "Hi", SkipTranslation: true, Key: strings.Repeat("k", 255), HasKey: true}, chat.EIdempotencyKeyReused, false},
	} {
		res, err := svc.Post(context.Background(), ben, tc.post)
		if got := chat.ErrorCode(err); got != tc.code {
			t.Errorf("%s: code %q, want %q", tc.name, got, tc.code)
			continue
		}
		if err == nil {
			m := res.View.Message
			if res.Replayed != tc.replayed || m.Author.Type != chat.AuthorUser || m.Author.ID != ben.UserID || m.SourceLanguage != "en-US" ||
				res.View.Content != tc.post.Content || res.View.Translated {
				t.Errorf("%s: got %+v, want the author's view (replayed %v)", tc.name, res, tc.replayed)
			}
		}
	}
	if len(stored) != 1 || stored[0].Message.Content != "Hi" {
		t.Fatalf("stored records %v, want one", stored)
	}
}

func TestListMessagesForbiddenWithoutAStoreCall(t *testing.T) {
	svc := &members.Service{} // a store call would panic on the nil reader
	for _, ch := range []string{"", "01JD9N0Z50BAKDWE0FBRMSFD5P", strings.ToLower(channel), channel + "#"} {
		if _, err := svc.ListMessages(context.Background(), ben, ch, "", 25); !chat.IsCode(err, chat.EForbidden) {
			t.Errorf("channel %q: %v, want forbidden", ch, err)
		}
	}
}

// ThreadRoot finds no thread: the tests of this file post roots.
func (f fakePosts) ThreadRoot(context.Context, string, string) (string, error) {
	return "", chat.FieldError("thread_id", "unknown thread")
}
