package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/events"
	"github.com/chatbridge/chat/pkg/fixture"

	chatbundle "github.com/chatbridge/chat"
)

// demoSupportSecret signs deliveries to the demo's support webhook, which
// the fixture gives no secret.
const demoSupportSecret = "whsig_demo_support_signing"

// demoDeliveries starts a chatctl listen receiver on a loopback port and
// points the demo's first active outbound and support webhooks at it, so
// that the demo's events print on stdout as they are delivered.
func demoDeliveries(ctx context.Context, a *app.App, stdout, stderr io.Writer) error {
	d, err := fixture.Parse(chatbundle.DemoFixture)
	if err != nil || len(d.Workspaces) == 0 {
		return err
	}
	ws := d.Workspaces[0]
	hooks, err := a.Store.EventWebhooks(ctx, ws.ID)
	if err != nil {
		return err
	}
	secrets := secretsFlag{[]byte(demoSupportSecret)}
	for _, h := range ws.OutboundWebhooks {
		if h.SigningSecret != "" {
			secrets = append(secrets, []byte(h.SigningSecret))
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: ListenHandler(secrets, stdout, time.Now), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { <-ctx.Done(); srv.Close() }()
	url := "http://" + ln.Addr().String() + "/"
	pointed := map[string]bool{}
	for _, h := range hooks {
		if !h.Active || pointed[h.Kind] {
			continue
		}
		if err := a.Store.PointWebhook(ctx, ws.ID, h.Kind, h.Key, url, demoSupportSecret); err != nil {
			return err
		}
		pointed[h.Kind] = true
		fmt.Fprintf(stderr, "chatctl: the demo's %s webhook %s delivers to %s (events print on stdout, one JSON line each)\n", h.Kind, h.ID, url)
	}
	if !pointed[events.KindOutbound] || !pointed[events.KindSupport] {
		fmt.Fprintln(stderr, "chatctl: the demo fixture has no active outbound or support webhook to point at the local receiver")
	}
	return nil
}
