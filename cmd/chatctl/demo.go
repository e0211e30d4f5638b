package main

import (
	"context"
	"fmt"
	"io"
	"time"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
)

// applyDemo applies the embedded demo fixture and prints ready-to-paste
// requests against it.
func applyDemo(ctx context.Context, a *app.App, stdout io.Writer) error {
	d, err := fixture.Parse(chatbundle.DemoFixture)
	if err != nil {
		return fmt.Errorf("demo fixture: %w", err)
	}
	if _, err := applyFixture(ctx, a.Store, d, time.Now()); err != nil {
		return fmt.Errorf("demo fixture: %w", err)
	}
	base := "http://" + awsenv.Get("ADDR", defaultAddr)
	for _, ws := range d.Workspaces {
		for _, r := range ws.TemporaryRooms {
			if r.Status == chat.RoomActive && r.Expires().After(time.Now()) {
				fmt.Fprintf(stdout, "\nJoin the demo room %q as a guest:\n\n  curl -s -X POST %s/api/v1/external/rooms/%s/guests \\\n    -H 'Content-Type: application/json' \\\n    -d '{\"nickname\":\"Ana\",\"preferred_language\":\"es-ES\"}'\n",
					r.Name, base, r.RoomID)
				break
			}
		}
		if len(ws.Users) > 0 {
			fmt.Fprintf(stdout, "\nList the workspace's outbound webhooks as %s:\n\n  curl -s %s/api/v1/workspaces/%s/outbound-webhooks -H 'Authorization: Bearer %s'\n",
				ws.Users[0].Name, base, ws.ID, ws.Users[0].APIToken)
		}
		for _, wh := range ws.InboundWebhooks {
			if wh.SignatureRequired == nil || !*wh.SignatureRequired {
				fmt.Fprintf(stdout, "\nPost through the inbound webhook %q:\n\n  curl -s -X POST %s/webhooks/%s/messages \\\n    -H 'Content-Type: application/json' -H 'X-Service-Webhook-Secret: %s' \\\n    -d '{\"content\":\"Deploy finished\"}'\n",
					wh.BotName, base, wh.ID, wh.Secret)
				break
			}
		}
		break
	}
	fmt.Fprintln(stdout)
	return nil
}
