// Command create-channel-upload is CreateChannelUploadFunction:
// POST /api/v1/workspaces/{workspace_id}/channels/{channel_id}/uploads.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/attachmentsapi"
)

func main() { httpfn.Run("CreateChannelUploadFunction", attachmentsapi.CreateChannelUpload) }
