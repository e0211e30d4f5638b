// Command create-room is CreateRoomFunction:
// POST /api/v1/workspaces/{workspace_id}/rooms (opens a Temporary Room).
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

func main() { app.RunHTTP("CreateRoomFunction", roomsapi.CreateRoom) }
