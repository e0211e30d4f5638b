package app

import (
	"net/http"

	"github.com/chatbridge/chat/pkg/members"
	"github.com/chatbridge/chat/pkg/membersapi"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

// members is the members' capability on the app's store.
func (a *App) members() *members.Service {
	return &members.Service{Channels: a.Store, Messages: a.Store, Posts: a.Store, IDs: a.IDs, Now: a.Now}
}

// roomManager is the workspace's room management on the app's store.
func (a *App) roomManager() *rooms.Manager {
	return &rooms.Manager{Store: a.Store, IDs: a.IDs, Now: a.Now}
}

// ChannelsHandler serves ListChannelsFunction.
func (a *App) ChannelsHandler() http.Handler {
	return membersapi.ChannelsHandler(a.auth(), a.members(), a.Cursor)
}

// ChannelMessagesHandler serves ListChannelMessagesFunction.
func (a *App) ChannelMessagesHandler() http.Handler {
	return membersapi.ChannelMessagesHandler(a.auth(), a.members(), a.Cursor)
}

// PostChannelMessageHandler serves PostChannelMessageFunction.
func (a *App) PostChannelMessageHandler() http.Handler {
	return membersapi.PostChannelMessageHandler(a.auth(), a.members())
}

// CreateRoomHandler serves CreateRoomFunction.
func (a *App) CreateRoomHandler() http.Handler {
	return roomsapi.CreateRoomHandler(a.auth(), a.roomManager(), a.Now)
}

// RoomsHandler serves ListRoomsFunction.
func (a *App) RoomsHandler() http.Handler {
	return roomsapi.RoomsHandler(a.auth(), a.roomManager(), a.Cursor, a.Now)
}

// CloseRoomHandler serves CloseRoomFunction.
func (a *App) CloseRoomHandler() http.Handler {
	return roomsapi.CloseRoomHandler(a.auth(), a.roomManager(), a.Now)
}
