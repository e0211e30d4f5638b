// Command add-channel-reaction is AddChannelReactionFunction:
// PUT /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}/reactions/{emoji} (a member's reaction).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/reactionsapi"
)

func main() { httpfn.Run("AddChannelReactionFunction", reactionsapi.AddChannelReaction) }
