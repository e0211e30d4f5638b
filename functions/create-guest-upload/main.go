// Command create-guest-upload is CreateGuestUploadFunction:
// POST /api/v1/external/rooms/{room_id}/uploads.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/attachmentsapi"
)

func main() { httpfn.Run("CreateGuestUploadFunction", attachmentsapi.CreateGuestUpload) }
