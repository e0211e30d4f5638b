// Command list-channel-messages is ListChannelMessagesFunction:
// GET /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages (a channel's messages in the caller's language).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/membersapi/channelmessages"
)

func main() { httpfn.Run("ListChannelMessagesFunction", channelmessages.ChannelMessages) }
