// Command delete-guest-message is DeleteGuestMessageFunction:
// DELETE /api/v1/external/rooms/{room_id}/messages/{message_id} (a guest's deletion).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/editsapi/guestedits"
)

func main() { httpfn.Run("DeleteGuestMessageFunction", guestedits.DeleteGuestMessage) }
