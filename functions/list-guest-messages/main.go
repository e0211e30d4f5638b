// Command list-guest-messages is ListGuestMessagesFunction:
// GET /api/v1/external/rooms/{room_id}/messages.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

func main() { httpfn.Run("ListGuestMessagesFunction", roomsapi.GuestMessages) }
