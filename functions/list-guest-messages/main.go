// Command list-guest-messages is ListGuestMessagesFunction:
// GET /api/v1/external/rooms/{room_id}/messages.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

func main() { app.RunHTTP("ListGuestMessagesFunction", roomsapi.GuestMessages) }
