package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/dynamo/deliverystore"
	"github.com/chatbridge/chat/pkg/dynamo/relaystore"
	"github.com/chatbridge/chat/pkg/fixture"

	chatbundle "github.com/chatbridge/chat"
)

// demoFallbackSecret signs deliveries to a demo webhook that the fixture
// gives no signing secret (PointWebhook stores it only then).
const demoFallbackSecret = "whsig_demo_receiver_signing"

// demoDeliveries starts a chatctl listen receiver on a loopback port and
// points every active outbound and support webhook of the demo at it, each
// at its own path and checked with its own signing secret, so that every
// kind of event prints on stdout as it is delivered (one line each, naming
// the webhook, the delivery and the attempt: DemoListenHandler) and none is
// sent to the fixture's unreachable .invalid targets. Refused deliveries
// print on stderr with why.
func demoDeliveries(ctx context.Context, a *app.App, stdout, stderr io.Writer) error {
	d, err := fixture.Parse(chatbundle.DemoFixture)
	if err != nil || len(d.Workspaces) == 0 {
		return err
	}
	ws := d.Workspaces[0]
	hooks, err := relaystore.New(a.DB, a.Table).EventWebhooks(ctx, ws.ID)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String() + "/"
	names, secrets := demoWebhookSecrets(ws)
	mux := http.NewServeMux()
	for _, h := range hooks {
		if !h.Active {
			continue
		}
		secret := secrets[h.ID]
		if secret == "" {
			secret = demoFallbackSecret
		}
		url := base + h.Kind + "/" + h.ID
		if err := deliverystore.New(a.DB, a.Table).PointWebhook(ctx, ws.ID, h.Kind, h.Key, url, secret); err != nil {
			return err
		}
		name := fmt.Sprintf("the %s webhook %q", h.Kind, names[h.ID])
		mux.Handle("/"+h.Kind+"/"+h.ID, DemoListenHandler(name, [][]byte{[]byte(secret)}, stdout, stderr, time.Now))
		fmt.Fprintf(stderr, "chatctl: demo: %s (%s) delivers to %s: its events print on stdout, one line each\n", name, h.ID, url)
	}
	mux.Handle("/", DemoListenHandler("an unknown webhook", nil, stdout, stderr, time.Now))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { <-ctx.Done(); srv.Close() }()
	return nil
}

// demoWebhookSecrets returns the names and signing secrets of ws's
// outbound and support webhooks by id.
func demoWebhookSecrets(ws fixture.Workspace) (names, secrets map[string]string) {
	names, secrets = map[string]string{}, map[string]string{}
	for _, h := range ws.OutboundWebhooks {
		names[h.ID], secrets[h.ID] = h.Name, h.SigningSecret
	}
	for _, h := range ws.SupportWebhooks {
		names[h.ID], secrets[h.ID] = h.Name, h.SigningSecret
	}
	return names, secrets
}
