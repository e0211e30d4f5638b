// Command list-rooms is ListRoomsFunction:
// GET /api/v1/workspaces/{workspace_id}/rooms (the workspace's rooms).
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

func main() { app.RunHTTP("ListRoomsFunction", roomsapi.Rooms) }
