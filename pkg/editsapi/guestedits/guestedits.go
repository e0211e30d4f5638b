package roomsapi

import (
	"net/http"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/edits"
	"github.com/chatbridge/chat/pkg/editsapi"
)

// guestActor is the session's guest as the actor of an edit.
func guestActor(s chat.GuestSession, room chat.Room) edits.Actor {
	return edits.Actor{Type: chat.AuthorGuest, ID: s.Guest.ID, Name: s.Guest.Nickname, WorkspaceID: room.WorkspaceID}
}

// EditGuestMessageHandler serves PATCH
// /api/v1/external/rooms/{room_id}/messages/{message_id} (contract section
// 13): a guest edits its own messages while its room is active.
func EditGuestMessageHandler(auth GuestAuthenticator, svc editsapi.MessageEditor) http.Handler {
	return RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		editsapi.Edit(w, r, svc, guestActor(s, room), room.ChannelID)
	})
}

// DeleteGuestMessageHandler serves DELETE
// /api/v1/external/rooms/{room_id}/messages/{message_id}: 204.
func DeleteGuestMessageHandler(auth GuestAuthenticator, svc editsapi.MessageEditor) http.Handler {
	return RequireGuest(auth, func(w http.ResponseWriter, r *http.Request, s chat.GuestSession, room chat.Room) {
		editsapi.Delete(w, r, svc, guestActor(s, room), room.ChannelID)
	})
}
