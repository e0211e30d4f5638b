// Command remove-guest-reaction is RemoveGuestReactionFunction:
// DELETE /api/v1/external/rooms/{room_id}/messages/{message_id}/reactions/{emoji} (a guest's reaction removed).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/reactionsapi"
)

func main() { httpfn.Run("RemoveGuestReactionFunction", reactionsapi.RemoveGuestReaction) }
