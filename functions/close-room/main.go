// Command close-room is CloseRoomFunction:
// POST /api/v1/workspaces/{workspace_id}/rooms/{room_id}/close (closes a Temporary Room).
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

func main() { app.RunHTTP("CloseRoomFunction", roomsapi.CloseRoom) }
