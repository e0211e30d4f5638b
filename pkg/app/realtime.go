package app

import (
	"context"

	"github.com/chatbridge/chat/pkg/apigwmanagement"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/realtime"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/wsapi"
)

// Logical ids of the realtime functions.
const (
	RealtimeFunction     = "RealtimeFunction"
	RealtimePushFunction = "RealtimePushFunction"
)

// RealtimeRoute is RealtimeFunction's handler (the WebSocket API's
// $default route), answering through sender.
func (a *App) RealtimeRoute(sender realtime.Sender) *wsapi.Route {
	return &wsapi.Route{Sender: sender, Subscriber: &realtime.Subscriber{
		Sessions: a.Store,
		Guests:   &rooms.GuestAuth{Sessions: a.Store, Now: a.Now},
		Members:  a.auth(),
		Store:    a.Store,
		Now:      a.Now,
	}}
}

// RealtimePush is RealtimePushFunction's handler (the table's stream),
// sending through sender.
func (a *App) RealtimePush(sender realtime.Sender) *wsapi.Push {
	return &wsapi.Push{Pusher: &realtime.Pusher{
		Store: a.Store, Translations: a.Store, Sender: sender, Encode: httpapi.EncodeMessageView, Now: a.Now,
	}}
}

// RealtimeFromEnv builds the App and the Management API client of a
// realtime function: TABLE_NAME and WEBSOCKET_MANAGEMENT_ENDPOINT are
// required.
func RealtimeFromEnv(ctx context.Context) (*App, *apigwmanagement.Client, error) {
	a, env, err := FromEnv(ctx, apigwmanagement.EnvEndpoint)
	if err != nil {
		return nil, nil, err
	}
	return a, apigwmanagement.NewFromConfig(a.AWS, env[apigwmanagement.EnvEndpoint]), nil
}
