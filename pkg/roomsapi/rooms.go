package roomsapi

import (
	"context"
	"net/http"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// RoomManager creates, lists and closes a workspace's Temporary Rooms
// (rooms.Manager).
type RoomManager interface {
	Create(ctx context.Context, p workspaces.Principal, req rooms.CreateRequest) (rooms.ManagedRoom, error)
	List(ctx context.Context, p workspaces.Principal, after string, limit int) (chat.Page[rooms.ManagedRoom], error)
	Close(ctx context.Context, p workspaces.Principal, roomID string) (rooms.ManagedRoom, error)
}

// managedRoomView is a room as the workspace API shows it (contract
// section 9).
type managedRoomView struct {
	RoomID      string `json:"room_id"`
	WorkspaceID string `json:"workspace_id"`
	ChannelID   string `json:"channel_id"`
	Name        string `json:"name"`
	Status      string `json:"status"`
	ExpiresAt   string `json:"expires_at"`
	CreatedAt   string `json:"created_at"`
	JoinPath    string `json:"join_path"`
}

func managedRoomViewOf(r rooms.ManagedRoom, now time.Time) managedRoomView {
	return managedRoomView{RoomID: r.ID, WorkspaceID: r.WorkspaceID, ChannelID: r.ChannelID, Name: r.Name,
		Status: r.StatusAt(now), ExpiresAt: chat.FormatTime(r.ExpiresAt), CreatedAt: chat.FormatTime(r.CreatedAt),
		JoinPath: rooms.JoinPath(r.ID)}
}

func writeRoom(w http.ResponseWriter, status int, v managedRoomView) {
	w.Header().Set("Cache-Control", "no-store")
	httpapi.JSON(w, status, struct {
		Data managedRoomView `json:"data"`
	}{v})
}

// CreateRoomHandler serves POST /api/v1/workspaces/{workspace_id}/rooms
// (contract section 9): 201 with the new room.
func CreateRoomHandler(auth httpapi.Authorizer, mgr RoomManager, now chat.Clock) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		obj, _, err := httpapi.ReadObject(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		var v chat.Validation
		var req rooms.CreateRequest
		var ok bool
		if req.ChannelID, ok = obj.String(&v, "channel_id", "channel id"); !ok && !v.Has("channel_id") {
			v.Add("channel_id", "The channel id field is required.")
		}
		if req.Name, ok = obj.String(&v, "name", "name"); !ok && !v.Has("name") {
			v.Add("name", "The name field is required.")
		}
		if req.ExpiresAt, ok = obj.String(&v, "expires_at", "expires at"); !ok && !v.Has("expires_at") {
			v.Add("expires_at", "The expires at field is required.")
		}
		if err := v.Err(); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		room, err := mgr.Create(r.Context(), p, req)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		writeRoom(w, http.StatusCreated, managedRoomViewOf(room, now()))
	})
}

// RoomsHandler serves GET /api/v1/workspaces/{workspace_id}/rooms (contract
// section 9): the workspace's rooms, newest first.
func RoomsHandler(auth httpapi.Authorizer, mgr RoomManager, codec *cursor.Codec, now chat.Clock) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		var at time.Time // when the page was read: every room's status is as of then
		httpapi.ServePage(w, r, codec, "rooms:"+p.WorkspaceID,
			func(ctx context.Context, after string, limit int) (chat.Page[rooms.ManagedRoom], error) {
				page, err := mgr.List(ctx, p, after, limit)
				at = now()
				return page, err
			},
			func(room rooms.ManagedRoom) managedRoomView { return managedRoomViewOf(room, at) })
	})
}

// CloseRoomHandler serves POST
// /api/v1/workspaces/{workspace_id}/rooms/{room_id}/close (contract section
// 9): 200 with the room, closed. A body, if any, is ignored.
func CloseRoomHandler(auth httpapi.Authorizer, mgr RoomManager, now chat.Clock) http.Handler {
	return httpapi.RequireWorkspace(auth, func(w http.ResponseWriter, r *http.Request, p workspaces.Principal) {
		room, err := mgr.Close(r.Context(), p, r.PathValue("room_id"))
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		writeRoom(w, http.StatusOK, managedRoomViewOf(room, now()))
	})
}
