// Package guestedits holds a guest's edit and delete functions (contract
// section 13), apart from roomsapi so that the room functions do not link
// editing.
package guestedits

import (
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/roomstore"
	"github.com/chatbridge/chat/pkg/edits"
	"github.com/chatbridge/chat/pkg/editsapi"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

// guestActor is the session's guest as the actor of an edit.
func guestActor(s chat.GuestSession, room chat.Room) edits.Actor {
	return edits.Actor{Type: chat.AuthorGuest, ID: s.Guest.ID, Name: s.Guest.Nickname, WorkspaceID: room.WorkspaceID}
}

// EditGuestMessageHandler serves PATCH
// /api/v1/external/rooms/{room_id}/messages/{message_id} (contract section
// 13): a guest edits its own messages while its room is active.
func EditGuestMessageHandler(auth roomsapi.GuestAuthenticator, svc editsapi.MessageEditor) http.Handler {
	return roomsapi.RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		editsapi.Edit(w, r, svc, guestActor(s, room), room.ChannelID)
	})
}

// DeleteGuestMessageHandler serves DELETE
// /api/v1/external/rooms/{room_id}/messages/{message_id}: 204.
func DeleteGuestMessageHandler(auth roomsapi.GuestAuthenticator, svc editsapi.MessageEditor) http.Handler {
	return roomsapi.RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		editsapi.Delete(w, r, svc, guestActor(s, room), room.ChannelID)
	})
}

// EditGuestMessage builds EditGuestMessageFunction.
func EditGuestMessage(a *app.App) (http.Handler, error) {
	return EditGuestMessageHandler(&rooms.GuestAuth{Sessions: roomstore.New(a.DB, a.Table), Now: a.Now}, editsapi.Editor(a)), nil
}

// DeleteGuestMessage builds DeleteGuestMessageFunction.
func DeleteGuestMessage(a *app.App) (http.Handler, error) {
	return DeleteGuestMessageHandler(&rooms.GuestAuth{Sessions: roomstore.New(a.DB, a.Table), Now: a.Now}, editsapi.Editor(a)), nil
}
