package membersapi

import (
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/dynamo/memberstore"
	"github.com/chatbridge/chat/pkg/members"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// service is the members' channels and posts on the member store, and its
// authenticator. A member's read of a channel's messages is package
// channelmessages's.
func service(a *app.App) (*workspaces.Authenticator, *members.Service) {
	st := memberstore.New(a.DB, a.Table)
	return a.Authenticator(), &members.Service{Channels: st, Posts: st, Attachments: a.Attachments(), IDs: a.IDs, Now: a.Now}
}

// Channels builds ListChannelsFunction.
func Channels(a *app.App) (http.Handler, error) {
	codec, err := cursor.Of(a.CursorKey)
	if err != nil {
		return nil, err
	}
	auth, svc := service(a)
	return ChannelsHandler(auth, svc, codec), nil
}

// PostChannelMessage builds PostChannelMessageFunction.
func PostChannelMessage(a *app.App) (http.Handler, error) {
	auth, svc := service(a)
	return PostChannelMessageHandler(auth, svc, a.Renderer(0)), nil
}
