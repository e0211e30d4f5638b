// Command edit-guest-message is EditGuestMessageFunction:
// PATCH /api/v1/external/rooms/{room_id}/messages/{message_id} (a guest's edit).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/editsapi/guestedits"
)

func main() { httpfn.Run("EditGuestMessageFunction", guestedits.EditGuestMessage) }
