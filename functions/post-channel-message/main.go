// Command post-channel-message is PostChannelMessageFunction:
// POST /api/v1/workspaces/{workspace_id}/channels/{channel_id}/messages (a member's post).
package main

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/app"
)

const function = "PostChannelMessageFunction"

func main() {
	app.InitLambdaLogger()
	h, err := handler(context.Background())
	app.Start(function, h, err)
}

// handler builds the function's Lambda handler from the environment.
func handler(ctx context.Context) (app.HTTPHandler, error) {
	a, _, err := app.FromEnv(ctx)
	if err != nil {
		return nil, err
	}
	return app.HTTPLambda(map[string]http.Handler{function: a.PostChannelMessageHandler()}), nil
}
