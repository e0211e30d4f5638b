// Command remove-channel-reaction is RemoveChannelReactionFunction:
// DELETE /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}/reactions/{emoji} (a member's reaction removed).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/reactionsapi"
)

func main() { httpfn.Run("RemoveChannelReactionFunction", reactionsapi.RemoveChannelReaction) }
