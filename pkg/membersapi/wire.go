package membersapi

import (
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/dynamo/memberstore"
	"github.com/chatbridge/chat/pkg/dynamo/roomstore"
	"github.com/chatbridge/chat/pkg/members"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// service is the members' capability on the table, and its authenticator.
func service(a *app.App) (*workspaces.Authenticator, *members.Service) {
	st := memberstore.New(a.DB, a.Table)
	return a.Authenticator(),
		&members.Service{Channels: st, Messages: roomstore.New(a.DB, a.Table), Posts: st, IDs: a.IDs, Now: a.Now}
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

// ChannelMessages builds ListChannelMessagesFunction.
func ChannelMessages(a *app.App) (http.Handler, error) {
	codec, err := cursor.Of(a.CursorKey)
	if err != nil {
		return nil, err
	}
	auth, svc := service(a)
	return ChannelMessagesHandler(auth, svc, codec), nil
}

// PostChannelMessage builds PostChannelMessageFunction.
func PostChannelMessage(a *app.App) (http.Handler, error) {
	auth, svc := service(a)
	return PostChannelMessageHandler(auth, svc), nil
}
