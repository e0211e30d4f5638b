package app

import (
	"net/http"

	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

// guestAuth is the one guest authenticator every guest endpoint uses.
func (a *App) guestAuth() *rooms.GuestAuth {
	return &rooms.GuestAuth{Sessions: a.Store, Now: a.Now}
}

// GuestMessagesHandler serves ListGuestMessagesFunction.
func (a *App) GuestMessagesHandler() http.Handler {
	return roomsapi.GuestMessagesHandler(a.guestAuth(), &rooms.Lister{Store: a.Store}, a.Cursor)
}

// PostGuestMessageHandler serves PostGuestMessageFunction.
func (a *App) PostGuestMessageHandler() http.Handler {
	return roomsapi.PostGuestMessageHandler(a.guestAuth(), &rooms.Poster{Store: a.Store, Rate: a.Store, IDs: a.IDs, Now: a.Now})
}
