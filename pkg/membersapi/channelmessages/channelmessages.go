// Package channelmessages serves a member's read of a channel's messages
// (ListChannelMessagesFunction). It sits apart from membersapi because it
// reads the room store, which the members' channel list and post do not
// use, and uses no member store.
package channelmessages

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/dynamo/reactionstore"
	"github.com/chatbridge/chat/pkg/dynamo/roomstore"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/members"
	"github.com/chatbridge/chat/pkg/messageview"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// ChannelMessages builds ListChannelMessagesFunction.
func ChannelMessages(a *app.App) (http.Handler, error) {
	codec, err := cursor.Of(a.CursorKey)
	if err != nil {
		return nil, err
	}
	svc := &members.Service{Messages: roomstore.New(a.DB, a.Table), Reactions: reactionstore.New(a.DB, a.Table), IDs: a.IDs, Now: a.Now}
	return ChannelMessagesHandler(a.Authenticator(), svc, codec, a.Renderer(0)), nil
}

// ChannelMessageLister lists a channel's messages as a member reads them
// (members.Service).
type ChannelMessageLister interface {
	ListMessages(ctx context.Context, p workspaces.Principal, channelID, after string, limit int) (chat.Page[chat.MessageView], error)
}

// ChannelMessagesHandler serves GET
// /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages
// (contract section 9): newest first, each message in the caller's
// preferred language, exactly as a guest of that language sees it. The
// channel list shows roots only (contract section 18).
func ChannelMessagesHandler(auth httpapi.Authorizer, svc ChannelMessageLister, codec *cursor.Codec, view messageview.Renderer) http.Handler {
	return channelList(auth, codec, view, func(r *http.Request, p workspaces.Principal, channel string) string {
		return "channel-messages:" + p.WorkspaceID + ":" + channel
	}, func(r *http.Request, p workspaces.Principal, channel string, paging httpapi.Paging) (chat.Page[chat.MessageView], error) {
		return svc.ListMessages(r.Context(), p, channel, paging.After, paging.Limit)
	})
}

// ChannelReplies builds ListChannelRepliesFunction.
func ChannelReplies(a *app.App) (http.Handler, error) {
	codec, err := cursor.Of(a.CursorKey)
	if err != nil {
		return nil, err
	}
	store := roomstore.New(a.DB, a.Table)
	svc := &members.Service{Threads: store, Reactions: reactionstore.New(a.DB, a.Table), IDs: a.IDs, Now: a.Now}
	return ChannelRepliesHandler(a.Authenticator(), svc, codec, a.Renderer(0)), nil
}

// ChannelReplyLister lists a thread as a member reads it (members.Service).
type ChannelReplyLister interface {
	ListReplies(ctx context.Context, p workspaces.Principal, channelID, id, after string, limit int) (chat.Page[chat.MessageView], error)
}

// ChannelRepliesHandler serves GET
// /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}/replies
// (contract section 18): the thread of message_id (its root's for a
// reply), oldest first, paged like the channel list, each reply as the
// list shows it.
func ChannelRepliesHandler(auth httpapi.Authorizer, svc ChannelReplyLister, codec *cursor.Codec, view messageview.Renderer) http.Handler {
	return channelList(auth, codec, view, func(r *http.Request, p workspaces.Principal, channel string) string {
		return "channel-replies:" + p.WorkspaceID + ":" + channel + ":" + r.PathValue("message_id")
	}, func(r *http.Request, p workspaces.Principal, channel string, paging httpapi.Paging) (chat.Page[chat.MessageView], error) {
		return svc.ListReplies(r.Context(), p, channel, r.PathValue("message_id"), paging.After, paging.Limit)
	})
}

// channelList serves a member's list of a channel's messages: 403 for a
// non-member before anything is read, the paging read with a cursor bound
// to scope, then the page list reads, each view encoded as the guest list
// encodes it (one view builder and one size rule for both).
func channelList(auth httpapi.Authorizer, codec *cursor.Codec, view messageview.Renderer,
	scope func(*http.Request, workspaces.Principal, string) string,
	list func(*http.Request, workspaces.Principal, string, httpapi.Paging) (chat.Page[chat.MessageView], error)) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		channel := r.PathValue("channel_id")
		if !p.MemberOf(channel) {
			httpapi.Error(w, r, workspaces.ErrForbidden())
			return
		}
		paging, err := httpapi.ReadPaging(r, codec, scope(r, p, channel))
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		page, err := list(r, p, channel, paging)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.WriteList(w, r, paging, len(page.Items), func(i int) ([]byte, error) { return view.Encode(page.Items[i]) }, page.Rest)
	})
}
