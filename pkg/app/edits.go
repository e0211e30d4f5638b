package app

import (
	"net/http"

	"github.com/chatbridge/chat/pkg/edits"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/inbound"
)

// editor is message editing on the app's store.
func (a *App) editor() *edits.Service {
	return &edits.Service{Store: a.Store, IDs: a.IDs, Now: a.Now}
}

// webhookChanges is the inbound webhooks' edits and deletions, with the
// webhook settings cache of a post.
func (a *App) webhookChanges() (*inbound.Changes, error) {
	ttl, err := WebhookCacheTTL()
	if err != nil {
		return nil, err
	}
	return &inbound.Changes{Service: a.InboundService(ttl), Editor: a.editor(), Logs: a.Store}, nil
}

func init() {
	httpFunctions["EditWebhookMessageFunction"] = func(a *App) (http.Handler, error) {
		c, err := a.webhookChanges()
		if err != nil {
			return nil, err
		}
		return httpapi.EditWebhookMessageHandler(c, a.Now, a.Metrics), nil
	}
	httpFunctions["DeleteWebhookMessageFunction"] = func(a *App) (http.Handler, error) {
		c, err := a.webhookChanges()
		if err != nil {
			return nil, err
		}
		return httpapi.DeleteWebhookMessageHandler(c, a.Now, a.Metrics), nil
	}
	httpFunctions["EditChannelMessageFunction"] = func(a *App) (http.Handler, error) {
		return httpapi.EditChannelMessageHandler(a.auth(), a.editor()), nil
	}
	httpFunctions["DeleteChannelMessageFunction"] = func(a *App) (http.Handler, error) {
		return httpapi.DeleteChannelMessageHandler(a.auth(), a.editor()), nil
	}
	httpFunctions["EditGuestMessageFunction"] = func(a *App) (http.Handler, error) {
		return httpapi.EditGuestMessageHandler(a.guestAuth(), a.editor()), nil
	}
	httpFunctions["DeleteGuestMessageFunction"] = func(a *App) (http.Handler, error) {
		return httpapi.DeleteGuestMessageHandler(a.guestAuth(), a.editor()), nil
	}
}
