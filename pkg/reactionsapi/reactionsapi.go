// Package reactionsapi is the HTTP side of reactions (contract section
// 18): PUT and DELETE …/messages/{message_id}/reactions/{emoji} on the
// member and guest paths.
package reactionsapi

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/dynamo/reactionstore"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/reactions"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// Reactor adds and removes reactions (reactions.Service).
type Reactor interface {
	Add(ctx context.Context, t reactions.Target, segment string) (reactions.Result, error)
	Remove(ctx context.Context, t reactions.Target, segment string) (reactions.Result, error)
}

// View is the answer of a PUT.
type View struct {
	MessageID string `json:"message_id"`
	Emoji     string `json:"emoji"`
	Count     int    `json:"count"`
	Me        bool   `json:"me"`
}

// serve adds (add) or removes the reaction {emoji} to message
// {message_id} of t's channel: 201 or 200 with the View, 204.
func serve(w http.ResponseWriter, r *http.Request, svc Reactor, t reactions.Target, add bool) {
	t.MessageID = r.PathValue("message_id")
	segment := r.PathValue("emoji")
	if !add {
		if _, err := svc.Remove(r.Context(), t, segment); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	res, err := svc.Add(r.Context(), t, segment)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	status := http.StatusOK
	if res.Changed {
		status = http.StatusCreated
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.JSON(w, status, struct {
		Data View `json:"data"`
	}{View{MessageID: res.MessageID, Emoji: res.Emoji, Count: res.Count, Me: true}})
}

// ChannelHandler serves PUT (add) or DELETE
// /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}/reactions/{emoji}:
// a member of the channel reacts (403 for anyone else, as the member
// message endpoints answer).
func ChannelHandler(auth httpapi.Authorizer, svc Reactor, add bool) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		ch := r.PathValue("channel_id")
		if !p.MemberOf(ch) {
			httpapi.Error(w, r, workspaces.ErrForbidden())
			return
		}
		serve(w, r, svc, reactions.Target{WorkspaceID: p.WorkspaceID, ChannelID: ch,
			Author: chat.Author{Type: chat.AuthorUser, ID: p.UserID, Name: p.Name}}, add)
	})
}

// GuestHandler serves PUT (add) or DELETE
// /api/v1/external/rooms/{room_id}/messages/{message_id}/reactions/{emoji}:
// the room's guest reacts while the room is active (410
// temporary_room_expired after, as the guest message endpoints answer),
// to a message of the room's channel: the guest list shows the whole
// channel (rooms.Lister), so every message of it is one it may see.
func GuestHandler(auth httpapi.GuestAuthenticator, svc Reactor, add bool) http.Handler {
	return httpapi.RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		serve(w, r, svc, reactions.Target{WorkspaceID: room.WorkspaceID, ChannelID: room.ChannelID,
			Author: chat.Author{Type: chat.AuthorGuest, ID: s.Guest.ID, Name: s.Guest.Nickname}}, add)
	})
}

// Service is reactions on the app's table.
func Service(a *app.App) *reactions.Service {
	return &reactions.Service{Store: reactionstore.New(a.DB, a.Table), Now: a.Now}
}

// guestAuth authenticates guests on the table's session lookup.
func guestAuth(a *app.App) *rooms.GuestAuth {
	return &rooms.GuestAuth{Sessions: dynamo.New(a.DB, a.Table), Now: a.Now}
}

// AddChannelReaction builds AddChannelReactionFunction.
func AddChannelReaction(a *app.App) (http.Handler, error) {
	return ChannelHandler(a.Authenticator(), Service(a), true), nil
}

// RemoveChannelReaction builds RemoveChannelReactionFunction.
func RemoveChannelReaction(a *app.App) (http.Handler, error) {
	return ChannelHandler(a.Authenticator(), Service(a), false), nil
}

// AddGuestReaction builds AddGuestReactionFunction.
func AddGuestReaction(a *app.App) (http.Handler, error) {
	return GuestHandler(guestAuth(a), Service(a), true), nil
}

// RemoveGuestReaction builds RemoveGuestReactionFunction.
func RemoveGuestReaction(a *app.App) (http.Handler, error) {
	return GuestHandler(guestAuth(a), Service(a), false), nil
}
