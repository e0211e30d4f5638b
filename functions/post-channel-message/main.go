// Command post-channel-message is PostChannelMessageFunction:
// POST /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages (a member's post).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/membersapi"
)

func main() { httpfn.Run("PostChannelMessageFunction", membersapi.PostChannelMessage) }
