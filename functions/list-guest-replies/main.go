// Command list-guest-replies is ListGuestRepliesFunction:
// GET /api/v1/external/rooms/{room_id}/messages/{message_id}/replies (a thread in the guest's language).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/roomsapi"
)

func main() { httpfn.Run("ListGuestRepliesFunction", roomsapi.GuestReplies) }
