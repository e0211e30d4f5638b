// Command join-room is JoinRoomFunction:
// POST /api/v1/external/rooms/{room_id}/guests.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

func main() { httpfn.Run("JoinRoomFunction", roomsapi.Join) }
