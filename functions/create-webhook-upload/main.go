// Command create-webhook-upload is CreateWebhookUploadFunction:
// POST /webhooks/{webhook}/uploads.
package main

import (
	"github.com/chatbridge/chat/pkg/app/httpfn"
	"github.com/chatbridge/chat/pkg/attachmentsapi"
)

func main() { httpfn.Run("CreateWebhookUploadFunction", attachmentsapi.CreateWebhookUpload) }
