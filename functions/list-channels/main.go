// Command list-channels is ListChannelsFunction:
// GET /api/v1/workspaces/{workspace_id}/channels (channels the caller is a member of).
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/membersapi"
)

func main() { httpfn.Run("ListChannelsFunction", membersapi.Channels) }
