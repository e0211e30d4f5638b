package editsapi

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/dynamo/editstore"
	"github.com/chatbridge/chat/pkg/edits"
)

// Editor is message editing on the app's table and attachments bucket
// (none when the app has no bucket), for the edit and delete
// functions' constructors (membersapi, roomsapi, inboundapi).
func Editor(a *app.App) *edits.Service {
	return &edits.Service{Store: editstore.New(a.DB, a.Table), Attachments: a.Attachments(), IDs: a.IDs, Now: a.Now}
}
