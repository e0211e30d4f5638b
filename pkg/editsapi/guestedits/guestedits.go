// Package guestedits holds a guest's edit and delete functions (contract
// section 13), apart from roomsapi so that the room functions do not link
// editing; the guest's gate is httpapi.RequireGuest on rooms.GuestAuth
// with the table's session lookup, so that they link neither roomsapi nor
// the room store.
package guestedits

import (
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/edits"
	"github.com/chatbridge/chat/pkg/editsapi"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/messageview"
	"github.com/chatbridge/chat/pkg/rooms"
)

// guestActor is the session's guest as the actor of an edit.
func guestActor(s chat.GuestSession, room chat.Room) edits.Actor {
	return edits.Actor{Type: chat.AuthorGuest, ID: s.Guest.ID, Name: s.Guest.Nickname, WorkspaceID: room.WorkspaceID}
}

// EditGuestMessageHandler serves PATCH
// /api/v1/external/rooms/{room_id}/messages/{message_id} (contract section
// 13): a guest edits its own messages while its room is active.
func EditGuestMessageHandler(auth httpapi.GuestAuthenticator, svc editsapi.MessageEditor, view messageview.Renderer) http.Handler {
	return httpapi.RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		editsapi.Edit(w, r, svc, guestActor(s, room), room.ChannelID, view)
	})
}

// DeleteGuestMessageHandler serves DELETE
// /api/v1/external/rooms/{room_id}/messages/{message_id}: 204.
func DeleteGuestMessageHandler(auth httpapi.GuestAuthenticator, svc editsapi.MessageEditor) http.Handler {
	return httpapi.RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		editsapi.Delete(w, r, svc, guestActor(s, room), room.ChannelID)
	})
}

// guestAuth authenticates guests on the table's session lookup, which
// the room functions use too: the guests' edits link no room store.
func guestAuth(a *app.App) *rooms.GuestAuth {
	return &rooms.GuestAuth{Sessions: dynamo.New(a.DB, a.Table), Now: a.Now}
}

// EditGuestMessage builds EditGuestMessageFunction.
func EditGuestMessage(a *app.App) (http.Handler, error) {
	return EditGuestMessageHandler(guestAuth(a), editsapi.ReactingEditor(a), a.Renderer(0)), nil
}

// DeleteGuestMessage builds DeleteGuestMessageFunction.
func DeleteGuestMessage(a *app.App) (http.Handler, error) {
	return DeleteGuestMessageHandler(guestAuth(a), editsapi.Editor(a)), nil
}
