// Command close-room is CloseRoomFunction:
// POST /api/v1/workspaces/{workspace_id}/rooms/{room_id}/close (closes a Temporary Room).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

func main() { httpfn.Run("CloseRoomFunction", roomsapi.CloseRoom) }
