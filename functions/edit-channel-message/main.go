// Command edit-channel-message is EditChannelMessageFunction:
// PATCH /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id} (a member's edit).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/editsapi"
)

func main() { httpfn.Run("EditChannelMessageFunction", editsapi.EditChannelMessage) }
