// Command list-rooms is ListRoomsFunction:
// GET /api/v1/workspaces/{workspace_id}/rooms (the workspace's rooms).
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP(function) }

const function = "ListRoomsFunction"
