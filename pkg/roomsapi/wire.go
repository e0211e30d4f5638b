package roomsapi

import (
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/dynamo/reactionstore"
	"github.com/chatbridge/chat/pkg/dynamo/roomstore"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// The constructors of the rooms' functions (app.HTTPConstructor), each
// named in its function's main.go.

// Join builds JoinRoomFunction.
func Join(a *app.App) (http.Handler, error) {
	st := roomstore.New(a.DB, a.Table)
	return JoinHandler(&rooms.Service{Store: st, IDs: a.IDs, Now: a.Now}, a.Metrics), nil
}

// GuestMessages builds ListGuestMessagesFunction.
func GuestMessages(a *app.App) (http.Handler, error) {
	codec, err := cursor.Of(a.CursorKey)
	if err != nil {
		return nil, err
	}
	st := roomstore.New(a.DB, a.Table)
	return GuestMessagesHandler(&rooms.GuestAuth{Sessions: st, Now: a.Now}, &rooms.Lister{Store: st, Reactions: reactionstore.New(a.DB, a.Table)}, codec, a.Renderer(0)), nil
}

// PostGuestMessage builds PostGuestMessageFunction.
func PostGuestMessage(a *app.App) (http.Handler, error) {
	st := roomstore.New(a.DB, a.Table)
	return PostGuestMessageHandler(&rooms.GuestAuth{Sessions: st, Now: a.Now},
		&rooms.Poster{Store: st, Rate: st, Attachments: a.Attachments(), IDs: a.IDs, Now: a.Now}, a.Renderer(0)), nil
}

// manager is the workspace's room management, and its authenticator.
func manager(a *app.App) (*workspaces.Authenticator, *rooms.Manager) {
	return a.Authenticator(),
		&rooms.Manager{Store: roomstore.New(a.DB, a.Table), IDs: a.IDs, Now: a.Now}
}

// CreateRoom builds CreateRoomFunction.
func CreateRoom(a *app.App) (http.Handler, error) {
	auth, m := manager(a)
	return CreateRoomHandler(auth, m, a.Now), nil
}

// Rooms builds ListRoomsFunction.
func Rooms(a *app.App) (http.Handler, error) {
	codec, err := cursor.Of(a.CursorKey)
	if err != nil {
		return nil, err
	}
	auth, m := manager(a)
	return RoomsHandler(auth, m, codec, a.Now), nil
}

// CloseRoom builds CloseRoomFunction.
func CloseRoom(a *app.App) (http.Handler, error) {
	auth, m := manager(a)
	return CloseRoomHandler(auth, m, a.Now), nil
}
