// Command join-room is JoinRoomFunction:
// POST /api/v1/external/rooms/{room_id}/guests.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP(function) }

const function = "JoinRoomFunction"
