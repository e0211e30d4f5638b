// Command create-room is CreateRoomFunction:
// POST /api/v1/workspaces/{workspace_id}/rooms (opens a Temporary Room).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

func main() { httpfn.Run("CreateRoomFunction", roomsapi.CreateRoom) }
