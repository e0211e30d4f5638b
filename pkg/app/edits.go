package app

import (
	"net/http"

	"github.com/chatbridge/chat/pkg/edits"
	"github.com/chatbridge/chat/pkg/httpapi"
)

// editor is message editing on the app's store.
func (a *App) editor() *edits.Service {
	return &edits.Service{Store: a.Store, IDs: a.IDs, Now: a.Now}
}

func init() {
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
