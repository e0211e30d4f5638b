// Command list-channel-replies is ListChannelRepliesFunction:
// GET /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id}/replies (a thread in the caller's language).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/membersapi/channelmessages"
)

func main() { httpfn.Run("ListChannelRepliesFunction", channelmessages.ChannelReplies) }
