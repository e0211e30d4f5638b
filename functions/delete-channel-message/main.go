// Command delete-channel-message is DeleteChannelMessageFunction:
// DELETE /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages/{message_id} (a member's or admin's deletion).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/editsapi"
)

func main() { httpfn.Run("DeleteChannelMessageFunction", editsapi.DeleteChannelMessage) }
