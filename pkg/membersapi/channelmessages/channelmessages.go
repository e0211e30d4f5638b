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
// preferred language, exactly as a guest of that language sees it.
func ChannelMessagesHandler(auth httpapi.Authorizer, svc ChannelMessageLister, codec *cursor.Codec, view messageview.Renderer) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		channel := r.PathValue("channel_id")
		if !p.MemberOf(channel) {
			httpapi.Error(w, r, workspaces.ErrForbidden())
			return
		}
		paging, err := httpapi.ReadPaging(r, codec, "channel-messages:"+p.WorkspaceID+":"+channel)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		page, err := svc.ListMessages(r.Context(), p, channel, paging.After, paging.Limit)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		// The guest list's encoder: one view builder and one size rule for both.
		httpapi.WriteList(w, r, paging, len(page.Items), func(i int) ([]byte, error) { return view.Encode(page.Items[i]) }, page.Rest)
	})
}
