package editsapi

import (
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/dynamo/editstore"
	"github.com/chatbridge/chat/pkg/dynamo/reactionstore"
	"github.com/chatbridge/chat/pkg/edits"
)

// Editor is message editing on the app's table and attachments bucket
// (none when the app has no bucket), for the edit and delete
// functions' constructors (membersapi, roomsapi, inboundapi).
func Editor(a *app.App) *edits.Service {
	return &edits.Service{Store: editstore.New(a.DB, a.Table), Attachments: a.Attachments(), IDs: a.IDs, Now: a.Now}
}

// ReactingEditor is Editor whose edit answers carry the message's
// reactions (contract section 18): the editing functions' (a deletion
// answers none, so the deleting functions do not read reactions).
func ReactingEditor(a *app.App) *edits.Service {
	e := Editor(a)
	e.Reactions = reactionstore.New(a.DB, a.Table)
	return e
}
