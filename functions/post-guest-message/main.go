// Command post-guest-message is PostGuestMessageFunction:
// POST /api/v1/external/rooms/{room_id}/messages.
package main

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

func main() { app.RunHTTP("PostGuestMessageFunction", roomsapi.PostGuestMessage) }
