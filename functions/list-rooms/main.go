// Command list-rooms is ListRoomsFunction:
// GET /api/v1/workspaces/{workspace_id}/rooms (the workspace's rooms).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

func main() { httpfn.Run("ListRoomsFunction", roomsapi.Rooms) }
