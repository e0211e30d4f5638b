// Command create-room is CreateRoomFunction:
// POST /api/v1/workspaces/{workspace_id}/rooms (opens a Temporary Room).
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP(function) }

const function = "CreateRoomFunction"
