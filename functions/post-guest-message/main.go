// Command post-guest-message is PostGuestMessageFunction:
// POST /api/v1/external/rooms/{room_id}/messages.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

func main() { httpfn.Run("PostGuestMessageFunction", roomsapi.PostGuestMessage) }
