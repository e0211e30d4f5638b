// Command add-guest-reaction is AddGuestReactionFunction:
// PUT /api/v1/external/rooms/{room_id}/messages/{message_id}/reactions/{emoji} (a guest's reaction).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/reactionsapi"
)

func main() { httpfn.Run("AddGuestReactionFunction", reactionsapi.AddGuestReaction) }
