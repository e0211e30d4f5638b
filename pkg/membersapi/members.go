package membersapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/chatbridge/chat/pkg/attachments"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/members"
	"github.com/chatbridge/chat/pkg/messages"
	"github.com/chatbridge/chat/pkg/messageview"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// ChannelLister lists the channels of a member (members.Service).
type ChannelLister interface {
	ListChannels(ctx context.Context, p workspaces.Principal, after string, limit int) (chat.Page[members.Channel], error)
}

// ChannelMessagePoster posts a member's message (members.Service).
type ChannelMessagePoster interface {
	Post(ctx context.Context, p workspaces.Principal, post members.Post) (members.Posted, error)
}

type channelView struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Name        string `json:"name"`
	CreatedAt   string `json:"created_at"`
}

// ChannelsHandler serves GET /api/v1/workspaces/{workspace_id}/channels
// (contract section 9): the caller's channels, oldest first.
func ChannelsHandler(auth httpapi.Authorizer, svc ChannelLister, codec *cursor.Codec) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		// The list is the caller's own: a cursor is bound to the user.
		httpapi.ServePage(w, r, codec, "channels:"+p.WorkspaceID+":"+p.UserID,
			func(ctx context.Context, after string, limit int) (chat.Page[members.Channel], error) {
				return svc.ListChannels(ctx, p, after, limit)
			},
			func(c members.Channel) channelView {
				return channelView{ID: c.ID, WorkspaceID: c.WorkspaceID, Name: c.Name, CreatedAt: chat.FormatTime(c.CreatedAt)}
			})
	})
}

// PostChannelMessageHandler serves POST
// /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages
// (contract section 9): 201 with the message's view; a replayed
// Idempotency-Key answers the original 201 with Idempotent-Replayed: true.
// Membership is judged before the body is read, the body before the key.
func PostChannelMessageHandler(auth httpapi.Authorizer, svc ChannelMessagePoster, view messageview.Renderer) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		post := members.Post{ChannelID: r.PathValue("channel_id")}
		if !p.MemberOf(post.ChannelID) {
			httpapi.Error(w, r, workspaces.ErrForbidden())
			return
		}
		obj, _, err := httpapi.ReadObject(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		var v chat.Validation
		refs, _ := attachments.Field(obj, &v)
		content, ok := obj.String(&v, "content", "content")
		if !ok && !v.Has("content") && len(refs) == 0 {
			v.Add("content", "The content field is required.")
		}
		skip, _ := obj.Bool(&v, "skip_translation", "skip translation")
		thread := messages.ThreadField(obj, &v)
		if err := v.Err(); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		post.Content, post.SkipTranslation, post.Attachments, post.ThreadID = content, skip, refs, thread
		// The adapter splits header values on commas; rejoined, a repeated
		// header is one value, which a key of its own never equals.
		if vals := r.Header.Values("Idempotency-Key"); len(vals) > 0 {
			post.Key, post.HasKey = strings.Join(vals, ","), true
		}
		res, err := svc.Post(r.Context(), p, post)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if res.Replayed {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		w.Header().Set("Cache-Control", "no-store")
		httpapi.JSON(w, http.StatusCreated, struct {
			Data messageview.View `json:"data"`
		}{view.Of(res.View)})
	})
}
