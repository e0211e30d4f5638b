// Command join-room is JoinRoomFunction:
// POST /api/v1/external/rooms/{room_id}/guests.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

func main() { app.RunHTTP("JoinRoomFunction", roomsapi.Join) }
